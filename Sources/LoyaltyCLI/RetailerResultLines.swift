import Foundation
import LoyaltyAPI
import LoyaltyClient

/// What the retailer commands that change one thing print once the server has done it. Text the server
/// sent is escaped for the terminal.
extension ClientText {
    /// `retailer offer set`.
    public static func offerSet(_ offer: Offer) -> String {
        "offer at \(offer.major):\(offer.minor) set: \"\(TerminalText.escaped(offer.title))\" (id \(offer.id.uuidString.lowercased()))"
    }

    /// `retailer store set`.
    public static func storeSet(_ store: RetailStore) -> String {
        "store \(TerminalText.escaped(store.storeID)) set: \(TerminalText.escaped(store.name)) at \(store.latitude),\(store.longitude), radius \(store.radiusMetres) m"
    }

    /// `retailer till-key create`: the key, shown only this once.
    public static func tillKeyCreated(_ key: TillKeyCredentials) -> String {
        """
        till key for \(TerminalText.escaped(key.name)) (id \(key.id.uuidString.lowercased())), shown only now:
        \(key.tillKey)
        """
    }

    /// `retailer rotate-key`: a key from LOYALTY_RETAILER_KEY is not saved (`savedIn` nil), so the only
    /// place to put the new one is the screen.
    public static func keyRotated(_ key: String, savedIn path: String?) -> String {
        if let path { return "API key rotated; the new key is saved in \(path)" }
        return "API key rotated; new key (shown once): \(key)"
    }
}

extension ClientJSONLines {
    /// `retailer offer rm --json`.
    public static func offerRemoved(major: UInt16, minor: UInt16) -> String {
        object([("event", .string("offer_removed")), ("major", .int(Int(major))), ("minor", .int(Int(minor)))])
    }

    /// `retailer store rm --json`.
    public static func storeRemoved(_ storeID: String) -> String {
        object([("event", .string("store_removed")), ("store_id", .string(storeID))])
    }

    /// `retailer till-key revoke --json`.
    public static func tillKeyRevoked(_ keyID: UUID) -> String {
        object([("event", .string("till_key_revoked")), ("id", .string(keyID.uuidString.lowercased()))])
    }
}
