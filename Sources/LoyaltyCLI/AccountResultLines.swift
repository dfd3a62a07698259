import Foundation
import LoyaltyAPI
import LoyaltyClient

/// What the account, device and registration commands print once the server has answered. Text the server
/// sent is escaped for the terminal.
extension ClientText {
    /// `account link` without a code: the code to type on the other device.
    public static func linkCode(_ link: LinkCode) -> String {
        let code = TerminalText.escaped(link.code)
        return "link code: \(code)\non the other device run: loyalty account link \(code)\n(expires \(timestamp(link.expiresAt)))"
    }

    /// `account create` and `account link CODE`: this device's place, and where its token is kept.
    public static func joined(_ device: DeviceCredentials, savedIn path: String) -> String {
        """
        account \(device.accountID.uuidString.lowercased()), device \(device.deviceID.uuidString.lowercased())
        token saved in \(path); run `loyalty sync` to fetch the offers
        """
    }

    /// `devices revoke ID`.
    public static func deviceRevoked(_ id: UUID) -> String {
        "device \(id.uuidString.lowercased()) revoked: its token no longer works"
    }

    /// `retailer register`: the proximity UUID to program into the beacons.
    public static func retailerRegistered(_ credentials: RetailerCredentials, savedIn path: String) -> String {
        """
        registered \(TerminalText.escaped(credentials.name))
        proximity UUID: \(credentials.uuid.uuidString)   (program it into your beacons)
        API key saved in \(path)
        """
    }
}

extension ClientJSONLines {
    /// `devices revoke ID --json`.
    public static func deviceRevoked(_ id: UUID) -> String {
        object([("event", .string("device_revoked")), ("device_id", .string(id.uuidString.lowercased()))])
    }

    /// `retailer rotate-key --json`: whether the new key is in the config file (else it was printed).
    public static func keyRotated(saved: Bool) -> String {
        object([("event", .string("key_rotated")), ("saved", .bool(saved))])
    }
}
