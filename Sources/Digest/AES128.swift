internal import CCrypto

/// AES-128 (FIPS 197) of single blocks by libcrypto: Eddystone-EID encrypts one block per key, so this is the ECB
/// mode of one block, no padding.
public enum AES128 {
    /// `block` (16 bytes) encrypted under `key` (16 bytes).
    public static func encrypt(block: [UInt8], key: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == 16, block.count == 16 else { throw CryptoError.wrongLength }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.libcrypto }
        defer { EVP_CIPHER_CTX_free(context) }
        var written: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            let ok =
                EVP_EncryptInit_ex2(context, EVP_aes_128_ecb(), key, nil, nil) == 1
                && EVP_CIPHER_CTX_set_padding(context, 0) == 1
                && EVP_EncryptUpdate(context, buffer.baseAddress, &written, block, 16) == 1
            count = ok ? Int(written) : 0
        }
        guard output.count == 16 else { throw CryptoError.libcrypto }
        return output
    }
}

/// Why a libcrypto operation gave no answer.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// A key, block or public key of the wrong size.
    case wrongLength
    /// An X25519 shared secret of zero: the peer's public key is of low order (the Eddystone-EID spec says to
    /// report it).
    case zeroSharedSecret
    /// An Eddystone-EID rotation period exponent above 15.
    case exponentOutOfRange(UInt8)
    /// libcrypto refused or failed.
    case libcrypto

    public var description: String {
        switch self {
        case .wrongLength: "a key or block of the wrong length"
        case .zeroSharedSecret: "the shared secret is zero: the peer's public key is invalid"
        case .exponentOutOfRange(let exponent): "rotation period exponent \(exponent): 0 to 15"
        case .libcrypto: "libcrypto failed"
        }
    }
}
