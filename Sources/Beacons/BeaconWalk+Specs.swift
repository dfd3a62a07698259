extension BeaconWalk {
    /// A `--walk` that is refused, with the message saying how to write one.
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The beacons of `beacon simulate`, one a `--walk` spec in order, or the message for the first spec
    /// that is not a walk.
    public static func beacons(
        parsing specs: [String], measuredPower: Int8,
        ephemeralIDs: (_ identityKey: [UInt8], _ exponent: UInt8, _ seconds: Double) -> EphemeralIDSchedule? = {
            _, _, _ in nil
        }
    ) throws(InputError) -> [Beacon] {
        var beacons: [Beacon] = []
        for (index, spec) in specs.enumerated() {
            guard
                let beacon = Beacon(
                    parsing: spec, measuredPower: measuredPower, index: index, ephemeralIDs: ephemeralIDs)
            else {
                throw InputError(
                    description:
                        "'\(spec)' is not a walk: use UUID:MAJOR:MINOR@SECONDS=METRES,..."
                        + " (or Eddystone's NAMESPACE:INSTANCE@..."
                        + " or eid:IDENTITYKEY:K@...) with times increasing and distances > 0")
            }
            beacons.append(beacon)
        }
        return beacons
    }
}
