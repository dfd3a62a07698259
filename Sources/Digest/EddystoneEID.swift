/// Eddystone-EID's cryptography as Google's spec (`eddystone-eid/eid-computation.md`) gives it: the ephemeral
/// identifier a beacon broadcasts for a time counter, and the identity key a registration's key exchange agrees on.
/// Every multi-byte value is big-endian.
public enum EddystoneEID {
    /// The largest rotation period exponent: an EID lasts 2^K seconds, K in 0...15.
    public static let maximumExponent: UInt8 = 15

    /// AES-128 under the identity key of 11 zero bytes, the salt 0xFF, 2 zero bytes and the top 16 bits of the
    /// time counter: the key of every EID of 65,536 seconds of counter.
    public static func temporaryKey(identityKey: [UInt8], counter: UInt32) throws(CryptoError) -> [UInt8] {
        let top = [UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16)]
        let block = [UInt8](repeating: 0, count: 11) + [0xFF, 0, 0] + top
        return try AES128.encrypt(block: block, key: identityKey)
    }

    /// The 8-byte EID: the first half of AES-128 under the temporary key of 11 zero bytes, K, and the counter with
    /// its K low bits cleared.
    public static func ephemeralID(
        identityKey: [UInt8], exponent: UInt8, counter: UInt32
    ) throws(CryptoError) -> [UInt8] {
        try ephemeralID(
            temporaryKey: try temporaryKey(identityKey: identityKey, counter: counter), exponent: exponent,
            counter: counter)
    }

    /// `ephemeralID` under the temporary key of the counter's top 16 bits: a resolver computing several windows of one
    /// beacon derives that key once.
    public static func ephemeralID(
        temporaryKey: [UInt8], exponent: UInt8, counter: UInt32
    ) throws(CryptoError) -> [UInt8] {
        guard exponent <= maximumExponent else { throw CryptoError.exponentOutOfRange(exponent) }
        let quantum = counter & ~(UInt32(1) << exponent - 1)
        let block =
            [UInt8](repeating: 0, count: 11)
            + [exponent, UInt8(quantum >> 24), UInt8(truncatingIfNeeded: quantum >> 16),
               UInt8(truncatingIfNeeded: quantum >> 8), UInt8(truncatingIfNeeded: quantum)]
        return Array(try AES128.encrypt(block: block, key: temporaryKey).prefix(8))
    }

    /// The identity key of the secure key exchange: HKDF-SHA256 of the X25519 shared secret with the salt
    /// resolver public key || beacon public key and no info, truncated to 128 bits. Either side computes it: the
    /// beacon from its private key and the resolver's public key, the resolver the other way round.
    public static func identityKey(
        privateKey: [UInt8], peerPublicKey: [UInt8], resolverPublicKey: [UInt8], beaconPublicKey: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard resolverPublicKey.count == 32, beaconPublicKey.count == 32 else { throw CryptoError.wrongLength }
        let secret = try X25519.sharedSecret(privateKey: privateKey, publicKey: peerPublicKey)
        return try HKDF.sha256(secret: secret, salt: resolverPublicKey + beaconPublicKey, count: 16)
    }
}
