import Foundation
import LoyaltyAPI
import LoyaltyClient

/// What the account and device commands print. Text the server sent is escaped for the terminal.
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

    /// `account export --output FILE`.
    public static func accountExported(_ head: AccountExport, path: String) -> String {
        "exported account \(head.accountID.uuidString.lowercased()) to \(path): \(head.devices.count) devices, "
            + "\(head.redemptions.count) redemptions, \(head.seenCount) seen offers, "
            + "\(head.verifiedSightingCount) verified sightings"
    }

    /// `account delete`.
    public static func accountDeleted(_ accountID: UUID, _ deletion: AccountDeletion) -> String {
        """
        account \(accountID.uuidString.lowercased()) deleted: \(deletion.devices) devices signed out, \(deletion.seen) seen \
        offers, \(deletion.verifiedSightings) verified sightings and \(deletion.linkCodes) link codes erased; \
        \(deletion.redemptionsKeptAnonymously) redemptions kept as anonymous counts (unused codes no longer work)
        this device's token and cache were removed
        """
    }

    /// `devices revoke ID`.
    public static func deviceRevoked(_ id: UUID) -> String {
        "device \(id.uuidString.lowercased()) revoked: its token no longer works"
    }

    /// `devices`.
    public static func devices(_ devices: [Device]) -> String {
        table(
            ["DEVICE", "NAME", "CREATED", "STATUS"],
            devices.map { device in
                [
                    device.id.uuidString.lowercased(), device.name ?? "-", timestamp(device.createdAt),
                    device.revokedAt.map { "revoked \(timestamp($0))" } ?? (device.current ? "this device" : "active"),
                ]
            })
    }

    /// `account show`: the server is the one the account lives on (`saved`: the config's), unless --server
    /// or LOYALTY_SERVER says otherwise; the line says which, and the saved one when it differs.
    public static func account(
        _ device: DeviceCredentials, server: (url: URL, source: ClientConfig.ServerSource), saved: String?,
        cache: OfferCache
    ) throws(ClientError) -> String {
        """
        account       \(device.accountID.uuidString.lowercased())
        this device   \(device.deviceID.uuidString.lowercased())
        server        \(serverInUse(server.url.absoluteString, server.source, saved: saved))
        cache         \(try cache.offerCount) offers, \(try cache.outboxCount) seen offers waiting to be sent, last sync \(timestamp(try cache.lastSync))
        """
    }
}

