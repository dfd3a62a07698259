import Foundation

/// A device token names its account: `ld_` + base64url(the account id's 16 bytes + 32 random bytes). The
/// lookup then reads the account's rows only (one shard once devices are distributed by account, see
/// docs/SCALING.md). Tokens issued before carry 32 random bytes and no account; they keep working, looked
/// up by their digest alone.
enum DeviceToken {
    static func issue(accountID: UUID) -> String {
        deviceTokenPrefix + Secrets.base64URL(withUnsafeBytes(of: accountID.uuid, Array.init) + Secrets.randomBytes(32))
    }

    /// The account a token names; nil for a token from before, or one that is not a device token at all. Only
    /// the account's symbols are decoded (every request asks, twice): the digest lookup judges the rest.
    static func accountID(in token: String) -> UUID? {
        let prefixLength = deviceTokenPrefix.utf8.count
        guard token.hasPrefix(deviceTokenPrefix), token.utf8.count == prefixLength + 64 else { return nil }
        var token = token
        // 24 symbols are 18 whole bytes, the account's 16 first.
        guard
            let bytes = token.withUTF8({
                Secrets.decodeBase64URL(symbols: UnsafeBufferPointer(rebasing: $0[prefixLength..<prefixLength + 24]))
            })
        else { return nil }
        return UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
    }
}
