import Beacons
import Digest

extension EphemeralIDSchedule {
    /// The EIDs of an Eddystone-EID beacon with `identityKey` and K = `exponent` over `seconds` from `startCounter`,
    /// as Google's spec computes them; nil past a million EIDs (K = 0 for 11 days), which no walk needs.
    init?(identityKey: [UInt8], exponent: UInt8, startCounter: UInt32, seconds: Double) throws(CryptoError) {
        guard seconds.isFinite, seconds / Double(1 << exponent) < 1_000_000 else { return nil }
        var ids: [EphemeralID] = []
        for counter in Self.counters(exponent: exponent, startCounter: startCounter, seconds: seconds) {
            let bytes = try EddystoneEID.ephemeralID(identityKey: identityKey, exponent: exponent, counter: counter)
            ids.append(EphemeralID(bytes: bytes)!)
        }
        self.init(exponent: exponent, startCounter: startCounter, ids: ids)
    }
}
