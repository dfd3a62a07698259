internal import CCrypto

/// AES-256-GCM (NIST SP 800-38D) by libcrypto: the server key seals secure beacons' identity keys at rest. The
/// nonce (12 bytes) must never repeat under a key: callers draw it at random for each seal.
public enum AESGCM {
    public static let keyLength = 32
    public static let nonceLength = 12
    public static let tagLength = 16

    /// `plaintext` encrypted under `key`, `associatedData` authenticated with it: the ciphertext, then the tag.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyLength, nonce.count == nonceLength else { throw CryptoError.wrongLength }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.libcrypto }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var written: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { output in
            EVP_EncryptInit_ex2(context, EVP_aes_256_gcm(), key, nonce, nil) == 1
                && EVP_EncryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1
                && EVP_EncryptUpdate(context, output.baseAddress, &written, plaintext, Int32(plaintext.count)) == 1
                && EVP_EncryptFinal_ex(context, output.baseAddress! + plaintext.count, &written) == 1
                && EVP_CIPHER_CTX_ctrl(
                    context, EVP_CTRL_AEAD_GET_TAG, Int32(tagLength), output.baseAddress! + plaintext.count) == 1
        }
        guard ok else { throw CryptoError.libcrypto }
        return output
    }

    /// The plaintext of `sealed` (ciphertext, then tag); `authenticationFailed` when the tag does not match the
    /// key, nonce, ciphertext and associated data.
    public static func open(
        _ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyLength, nonce.count == nonceLength, sealed.count >= tagLength else {
            throw CryptoError.wrongLength
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.libcrypto }
        defer { EVP_CIPHER_CTX_free(context) }
        let count = sealed.count - tagLength
        var tag = Array(sealed[count...])
        var output = [UInt8](repeating: 0, count: count + tagLength)
        var written: Int32 = 0
        let decrypted = output.withUnsafeMutableBufferPointer { output in
            EVP_DecryptInit_ex2(context, EVP_aes_256_gcm(), key, nonce, nil) == 1
                && EVP_DecryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1
                && EVP_DecryptUpdate(context, output.baseAddress, &written, sealed, Int32(count)) == 1
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), &tag) == 1
        }
        guard decrypted else { throw CryptoError.libcrypto }
        // The tag is checked here: nothing decrypted is returned before it matched.
        guard output.withUnsafeMutableBufferPointer({ EVP_DecryptFinal_ex(context, $0.baseAddress! + count, &written) }) == 1
        else { throw CryptoError.authenticationFailed }
        return Array(output.prefix(count))
    }
}
