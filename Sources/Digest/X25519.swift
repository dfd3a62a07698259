internal import CCrypto

/// X25519 (RFC 7748) by libcrypto: the key agreement of Eddystone-EID's registration.
public enum X25519 {
    /// The public key (32 bytes) of a private key (32 bytes, clamped by libcrypto as the RFC says).
    public static func publicKey(privateKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard privateKey.count == 32 else { throw CryptoError.wrongLength }
        guard let key = EVP_PKEY_new_raw_private_key_ex(nil, "X25519", nil, privateKey, 32) else {
            throw CryptoError.libcrypto
        }
        defer { EVP_PKEY_free(key) }
        var count = 32
        var publicKey = [UInt8](repeating: 0, count: 32)
        guard EVP_PKEY_get_raw_public_key(key, &publicKey, &count) == 1, count == 32 else {
            throw CryptoError.libcrypto
        }
        return publicKey
    }

    /// The shared secret of `privateKey` and a peer's `publicKey`; a zero secret is refused.
    public static func sharedSecret(privateKey: [UInt8], publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard privateKey.count == 32, publicKey.count == 32 else { throw CryptoError.wrongLength }
        guard let mine = EVP_PKEY_new_raw_private_key_ex(nil, "X25519", nil, privateKey, 32) else {
            throw CryptoError.libcrypto
        }
        defer { EVP_PKEY_free(mine) }
        guard let peer = EVP_PKEY_new_raw_public_key_ex(nil, "X25519", nil, publicKey, 32) else {
            throw CryptoError.libcrypto
        }
        defer { EVP_PKEY_free(peer) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, mine, nil) else { throw CryptoError.libcrypto }
        defer { EVP_PKEY_CTX_free(context) }
        var count = 32
        var secret = [UInt8](repeating: 0, count: 32)
        // libcrypto itself refuses to derive an all-zero secret; either way it is no key.
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer) == 1 else {
            throw CryptoError.libcrypto
        }
        guard EVP_PKEY_derive(context, &secret, &count) == 1, count == 32, secret.contains(where: { $0 != 0 }) else {
            throw CryptoError.zeroSharedSecret
        }
        return secret
    }
}
