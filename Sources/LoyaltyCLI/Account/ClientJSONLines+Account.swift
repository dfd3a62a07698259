import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of the account and device commands.
extension ClientJSONLines {
    /// `devices`, one line per device.
    public static func device(_ device: Device) -> String {
        object(
            Device.CodingKeys.self,
            [
                .id: id(device.id), .name: optional(device.name), .createdAt: timestamp(device.createdAt),
                .revokedAt: timestamp(device.revokedAt), .current: .bool(device.current),
            ])
    }

    /// `account create` (`account_created`) and `account link CODE` (`device_linked`).
    public static func joined(_ device: DeviceCredentials, event: String) -> String {
        object(
            DeviceCredentials.CodingKeys.self, event: event,
            [.accountID: id(device.accountID), .deviceID: id(device.deviceID)])
    }

    /// `account show`: the account, this device, and what its cache holds.
    public static func account(
        _ device: DeviceCredentials, server: (url: URL, source: ClientConfig.ServerSource), cache: OfferCache
    ) throws(ClientError) -> String {
        object([
            ("account_id", id(device.accountID)), ("device_id", id(device.deviceID)),
            ("server", .string(server.url.absoluteString)), ("server_from", .string(server.source.rawValue)),
            ("cached_offers", .int(try cache.offerCount)),
            ("unsent_seen", .int(try cache.outboxCount)), ("last_sync", timestamp(try cache.lastSync)),
            ("catalog_partial", .bool(try cache.catalogIsPartial)),
        ])
    }

    /// `account link`: the code for another device.
    public static func linkCode(_ link: LinkCode) -> String {
        object(LinkCode.CodingKeys.self, [.code: .string(link.code), .expiresAt: timestamp(link.expiresAt)])
    }

    /// `account export --output FILE --json`.
    public static func accountExported(_ head: AccountExport, path: String) -> String {
        object([
            ("event", .string("account_exported")), ("account_id", id(head.accountID)), ("file", .string(path)),
            ("devices", .int(head.devices.count)), ("redemptions", .int(head.redemptions.count)),
            ("seen", .int(head.seenCount)), ("verified_sightings", .int(head.verifiedSightingCount)),
        ])
    }

    /// `account delete --json`.
    public static func accountDeleted(_ accountID: UUID, _ deletion: AccountDeletion) -> String {
        object([
            ("event", .string("account_deleted")), ("account_id", id(accountID)), ("devices", .int(deletion.devices)),
            ("seen", .int(deletion.seen)), ("verified_sightings", .int(deletion.verifiedSightings)),
            ("link_codes", .int(deletion.linkCodes)),
            ("redemptions_kept_anonymously", .int(deletion.redemptionsKeptAnonymously)),
        ])
    }

    /// `devices revoke ID --json`.
    public static func deviceRevoked(_ id: UUID) -> String {
        object([("event", .string("device_revoked")), ("device_id", .string(id.uuidString.lowercased()))])
    }
}
