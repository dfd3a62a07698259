extension BeaconWalk.Beacon {
    /// `UUID:MAJOR:MINOR@T=D,T=D,...`: the beacon and its distance in metres at each time in seconds
    /// (times increasing, distances above 0), as `loyalty beacon simulate --walk` takes it. The `index`-th
    /// beacon of a walk gets its own static random address. An Eddystone-UID beacon is `NAMESPACE:INSTANCE@...`
    /// (20 and 12 hex digits); an Eddystone-EID beacon `eid:IDENTITYKEY:K@...` (32 hex digits, K 0...15), whose
    /// identifiers over the walk's seconds `ephemeralIDs` computes.
    public init?(
        parsing spec: String, measuredPower: Int8, index: Int,
        ephemeralIDs: (_ identityKey: [UInt8], _ exponent: UInt8, _ seconds: Double) -> EphemeralIDSchedule? = {
            _, _, _ in nil
        }
    ) {
        let halves = spec.split(separator: "@", maxSplits: 1)
        guard halves.count == 2 else { return nil }
        var path: [BeaconWalk.Waypoint] = []
        for point in halves[1].split(separator: ",") {
            let pair = point.split(separator: "=")
            guard pair.count == 2, let time = Double(pair[0]), let distance = Double(pair[1]),
                time >= 0, distance > 0, distance.isFinite, time > (path.last?.time ?? -1)
            else { return nil }
            path.append(BeaconWalk.Waypoint(time: time, distance: distance))
        }
        guard let end = path.last?.time else { return nil }
        let kind: BeaconKind
        let identity: BeaconIdentity
        var schedule: EphemeralIDSchedule?
        let parts = halves[0].split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0] == "eid" {
            guard parts[1].count == 32, let key = [UInt8](pastedHex: String(parts[1])), let exponent = UInt8(parts[2]),
                exponent <= 15, let ids = ephemeralIDs(key, exponent, end)
            else { return nil }
            (kind, identity, schedule) = (.eddystoneEID, BeaconIdentity(ephemeralID: ids.ids[0]), ids)
        } else if let uid = EddystoneUID(parsing: String(halves[0])) {
            (kind, identity) = (.eddystoneUID, BeaconIdentity(eddystoneUID: uid))
        } else if let beacon = try? BeaconIdentity(parsing: String(halves[0])) {
            (kind, identity) = (.iBeacon, beacon)
        } else {
            return nil
        }
        let low = UInt8(truncatingIfNeeded: index)
        self.init(
            frame: BeaconFrame(kind: kind, identity: identity, measuredPower: measuredPower),
            address: BluetoothAddress(wire: (low, UInt8(truncatingIfNeeded: index >> 8), 0x4C, 0x59, 0x4F, 0xC0)),
            path: path, ephemeralIDs: schedule)
    }
}
