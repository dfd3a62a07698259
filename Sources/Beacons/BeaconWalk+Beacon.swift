extension BeaconWalk.Beacon {
    /// `UUID:MAJOR:MINOR@T=D,T=D,...`: the beacon and its distance in metres at each time in seconds
    /// (times increasing, distances above 0), as `loyalty beacon simulate --walk` takes it. The `index`-th
    /// beacon of a walk gets its own static random address.
    public init?(parsing spec: String, measuredPower: Int8, index: Int) {
        let halves = spec.split(separator: "@", maxSplits: 1)
        guard halves.count == 2, let identity = try? BeaconIdentity(parsing: String(halves[0])) else { return nil }
        var path: [BeaconWalk.Waypoint] = []
        for point in halves[1].split(separator: ",") {
            let pair = point.split(separator: "=")
            guard pair.count == 2, let time = Double(pair[0]), let distance = Double(pair[1]),
                time >= 0, distance > 0, distance.isFinite, time > (path.last?.time ?? -1)
            else { return nil }
            path.append(BeaconWalk.Waypoint(time: time, distance: distance))
        }
        guard !path.isEmpty else { return nil }
        let low = UInt8(truncatingIfNeeded: index)
        self.init(
            frame: BeaconFrame(kind: .iBeacon, identity: identity, measuredPower: measuredPower),
            address: BluetoothAddress(wire: (low, UInt8(truncatingIfNeeded: index >> 8), 0x4C, 0x59, 0x4F, 0xC0)),
            path: path)
    }
}
