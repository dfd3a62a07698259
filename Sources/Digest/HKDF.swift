internal import CCrypto

/// HKDF with SHA-256 (RFC 5869) by libcrypto.
public enum HKDF {
    /// `count` bytes of key material from `secret`, extracted with `salt` and expanded with `info`.
    public static func sha256(
        secret: [UInt8], salt: [UInt8], info: [UInt8] = [], count: Int
    ) throws(CryptoError) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: count)
        guard loyalty_hkdf_sha256(salt, salt.count, secret, secret.count, info, info.count, &key, count) == 1 else {
            throw CryptoError.libcrypto
        }
        return key
    }
}
