// Tests of Beacons.
