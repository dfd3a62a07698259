import Beacons
import Foundation

/// A secure beacon's iBeacon form as an advertiser broadcasts it: under the retailer's UUID, the major and minor
/// are the first 4 bytes of the EID of its time counter, recomputed when the 2^K-second window turns, so that
/// monitoring by the UUID works as before and only the service can say which beacon it is.
public struct RotatingIBeacon: Sendable {
    public var uuid: UUID
    /// The RSSI at 1 m.
    public var measuredPower: Int8
    public var timeCounter: EIDTimeCounter
    /// The EID of a counter (the caller computes it: AES is Digest's).
    public var ephemeralID: @Sendable (UInt32) -> EphemeralID

    public init(
        uuid: UUID, measuredPower: Int8, timeCounter: EIDTimeCounter,
        ephemeralID: @escaping @Sendable (UInt32) -> EphemeralID
    ) {
        self.uuid = uuid
        self.measuredPower = measuredPower
        self.timeCounter = timeCounter
        self.ephemeralID = ephemeralID
    }

    /// The iBeacon frame broadcast `elapsed` seconds after the start.
    public func frame(elapsed: Double) -> BeaconFrame {
        let eid = ephemeralID(timeCounter.counter(elapsed: elapsed))
        return BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: uuid, rotatingWith: eid), measuredPower: measuredPower)
    }
}
