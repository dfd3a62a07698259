extension BeaconWalk {
    /// A `--walk` that is refused, with the message saying how to write one.
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The beacons of `beacon simulate`, one a `--walk` spec in order, or the message for the first spec
    /// that is not a walk.
    public static func beacons(parsing specs: [String], measuredPower: Int8) throws(InputError) -> [Beacon] {
        var beacons: [Beacon] = []
        for (index, spec) in specs.enumerated() {
            guard let beacon = Beacon(parsing: spec, measuredPower: measuredPower, index: index) else {
                throw InputError(
                    description:
                        "'\(spec)' is not a walk: use UUID:MAJOR:MINOR@SECONDS=METRES,... with times increasing and distances > 0")
            }
            beacons.append(beacon)
        }
        return beacons
    }
}
