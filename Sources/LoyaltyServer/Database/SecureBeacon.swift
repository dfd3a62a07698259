import Foundation
import LoyaltyAPI

/// A secure beacon as the resolver needs it: whose it is, its identity key (opened), and its clock.
struct SecureBeacon: Sendable {
    /// The counter a new beacon's clock has at its provisioning: 255 seconds before the temporary key's first
    /// roll-over (65,536), the value Google's tools and `loyalty beacon simulate --eid-counter` start from, so a
    /// beacon that mishandles the roll-over shows it in its first hour, not after 18 hours in the field.
    static let initialCounter: Int64 = 65_280
    /// How recent a verified sighting must be for an offer on the beacon to be seen or redeemed: a visit's length,
    /// so a shopper who was shown the offer can still walk to the till.
    static let presenceWindow: TimeInterval = 30 * 60

    var retailerID: UUID
    var retailerName: String
    /// The retailer's proximity UUID, which the iBeacon form broadcasts under.
    var uuid: UUID
    var major: UInt16
    var minor: UInt16
    var exponent: UInt8
    var form: SecureBeaconForm
    var identityKey: [UInt8]
    /// The counter's value at `counterAt`; it counts seconds from there.
    var counterOrigin: Int64
    var counterAt: Date

    /// What a sealed identity key is bound to (the AES-GCM associated data): a sealed key copied to another beacon's
    /// row, or another retailer's, does not open there.
    static func binding(retailerID: UUID, major: UInt16, minor: UInt16) -> [UInt8] {
        Array("secure_beacons \(retailerID.uuidString.lowercased()) \(major) \(minor)".utf8)
    }
}
