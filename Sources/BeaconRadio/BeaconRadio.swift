// The BeaconRadio module; its sources arrive with their issue.
