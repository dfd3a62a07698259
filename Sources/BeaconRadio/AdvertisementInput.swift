import Beacons
import Foundation

extension BeaconAdvertisement {
    /// A value given for the beacon to advertise that is refused, saying which option and why.
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The beacon from the text of `--uuid`, `--major`, `--minor`, `--measured-power` and `--interval-ms`
    /// (nil when not given), each refused value with its own message.
    public init(
        uuid uuidText: String?, major majorText: String?, minor minorText: String?, measuredPower powerText: String?,
        intervalMilliseconds intervalText: String?
    ) throws(InputError) {
        guard let uuidText else {
            throw InputError(description: "--uuid UUID is required (the retailer's proximity UUID)")
        }
        guard let uuid = UUID(uuidString: uuidText) else {
            throw InputError(
                description: "'\(uuidText)' is not a UUID: use 32 hex digits in 8-4-4-4-12 groups, "
                    + "like 8F0C1DDC-11E5-4A07-8910-425941B072F9")
        }
        func number(_ name: String, _ text: String?) throws(InputError) -> UInt16 {
            guard let text else {
                throw InputError(description: "--\(name) is required (0...65535)")
            }
            guard let value = UInt16(text) else {
                throw InputError(description: "--\(name) must be a whole number 0...65535, got '\(text)'")
            }
            return value
        }
        let major = try number("major", majorText)
        let minor = try number("minor", minorText)
        let powerText = powerText ?? "-59"
        guard let power = Int8(powerText), (-100...0).contains(power) else {
            throw InputError(
                description: "--measured-power must be a whole number of dBm, -100...0, got '\(powerText)'")
        }
        let intervalText = intervalText ?? "100"
        guard let interval = Double(intervalText) else {
            throw InputError(description: "--interval-ms must be a number of milliseconds, got '\(intervalText)'")
        }
        let frame = BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: power)
        do {
            self = try BeaconAdvertisement(frame: frame, intervalMilliseconds: interval)
        } catch {
            throw InputError(description: "--interval-ms: \(error.description)")
        }
    }
}
