// Tests of BeaconRadio.
