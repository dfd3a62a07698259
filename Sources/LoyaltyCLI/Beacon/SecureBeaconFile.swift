import Arguments
import Beacons
import Digest
import Foundation
import JSONCoding
import LoyaltyAPI

/// A secure beacon's provisioning document (`loyalty retailer beacon secure --output FILE`), read to broadcast the
/// beacon (`beacon advertise --secure`) or to simulate it (`beacon simulate --secure`): its identity key, K, form and
/// UUID, and its time counter, which counts one a second from `counter` at `counter_at` as the service's copy does.
struct SecureBeaconFile {
    let path: String
    let provisioning: BeaconProvisioning
    let identityKey: [UInt8]

    /// Exit 74 for a file that cannot be read, 77 for one others may read, 65 for one that is not a provisioning
    /// document or holds a key or K no beacon can have.
    init(path: String) throws {
        let contents = try OwnerOnlyFile.contents(of: path, what: "the provisioning document")
        func refuse(_ problem: String) -> CommandFailure {
            CommandFailure(
                "\(path) is not a secure beacon's provisioning document (\(problem)): write it with "
                    + "`loyalty retailer beacon secure MAJOR MINOR --output FILE`", exitCode: ExitCode.dataError)
        }
        guard let json = try? JSONSerialization.jsonObject(with: contents) else { throw refuse("not JSON") }
        guard let fields = json as? [String: Any] else { throw refuse("not a JSON object") }
        // Checked before decoding, which on Linux calls a number out of UInt8's range "not valid JSON".
        if let exponent = fields["exponent"] as? NSNumber,
            exponent.doubleValue != exponent.doubleValue.rounded()
                || !(0...Double(EddystoneEID.maximumExponent)).contains(exponent.doubleValue)
        {
            throw refuse("exponent must be 0 to \(EddystoneEID.maximumExponent)")
        }
        let provisioning: BeaconProvisioning
        do { provisioning = try LoyaltyJSON.decoder().decode(BeaconProvisioning.self, from: contents) } catch {
            throw refuse(Self.reason(error))
        }
        guard provisioning.identityKey.count == 32, let key = [UInt8](pastedHex: provisioning.identityKey) else {
            throw refuse("identity_key must be 32 hex digits")
        }
        self.path = path
        self.provisioning = provisioning
        self.identityKey = key
    }

    /// The beacon's time counter at `time` (Unix seconds), with the fraction of its second; exit 65 for a time before
    /// the counter's 0 or past its 32 bits.
    func counter(at time: Double) throws -> Double {
        let counter = Double(provisioning.counter) + time - provisioning.counterAt.timeIntervalSince1970
        guard counter >= 0, counter < Double(UInt64(UInt32.max) + 1) else {
            throw CommandFailure(
                "the beacon of \(path) has no time counter at \(LoyaltyJSON.formatTimestamp(Date(timeIntervalSince1970: time))) "
                    + "(its counter was \(provisioning.counter) at \(LoyaltyJSON.formatTimestamp(provisioning.counterAt)))",
                exitCode: ExitCode.dataError)
        }
        return counter
    }

    /// The beacon's EID for `counter`: cannot fail, the key and K having been checked.
    func ephemeralID(counter: UInt32) -> EphemeralID {
        let bytes = try! EddystoneEID.ephemeralID(identityKey: identityKey, exponent: provisioning.exponent, counter: counter)
        return EphemeralID(bytes: bytes)!
    }

    /// What made the document unreadable, in a line: the field that is missing or of the wrong kind.
    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty
                ? context.debugDescription
                : "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }
}
