import Digest
import Foundation
import Testing

/// Eddystone-EID against vectors from a port of Google's eidtools.py (Tests/Fixtures/eddystone-eid-vectors.json
/// says how each was made), and libcrypto's primitives against their published vectors.
@Suite struct EddystoneEIDTests {
    struct Vectors: Decodable {
        struct EID: Decodable {
            let identity_key: String
            let exponent: UInt8
            let counter: UInt32
            let temporary_key: String
            let eid: String
        }
        struct KeyExchange: Decodable {
            let resolver_private_key, resolver_public_key, beacon_private_key, beacon_public_key: String
            let shared_secret, identity_key, eid_exponent_10_counter_65280: String
        }
        let eids: [EID]
        let key_exchanges: [KeyExchange]
    }

    static let vectors: Vectors = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/eddystone-eid-vectors.json")
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: file))
    }()

    private static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { index in
            let start = hex.index(hex.startIndex, offsetBy: index)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(UInt16($0) + 0x100, radix: 16).dropFirst() }.joined()
    }

    @Test func vectorsCoverTheSpecsCases() {
        let eids = Self.vectors.eids
        #expect(Set(eids.map(\.exponent)).isSuperset(of: [0, 15]))
        #expect(eids.contains { $0.counter % 65536 == 65280 } && eids.contains { $0.counter % 65536 == 65535 })
        #expect(eids.contains { $0.counter % 65536 == 0 && $0.counter > 0 })
    }

    @Test func ephemeralIDsAndTemporaryKeysMatchEidtools() throws {
        for vector in Self.vectors.eids {
            let key = Self.bytes(vector.identity_key)
            let temporary = try EddystoneEID.temporaryKey(identityKey: key, counter: vector.counter)
            #expect(Self.hex(temporary) == vector.temporary_key, "\(vector.counter)")
            let eid = try EddystoneEID.ephemeralID(identityKey: key, exponent: vector.exponent, counter: vector.counter)
            #expect(Self.hex(eid) == vector.eid, "K \(vector.exponent) counter \(vector.counter)")
        }
    }

    /// The temporary key changes at a multiple of 65,536 of the counter and nowhere else.
    @Test func temporaryKeyRollsOverAt65536() throws {
        let key = [UInt8](repeating: 7, count: 16)
        let before = try EddystoneEID.temporaryKey(identityKey: key, counter: 0x0002_FF00)
        #expect(try EddystoneEID.temporaryKey(identityKey: key, counter: 0x0002_FFFF) == before)
        #expect(try EddystoneEID.temporaryKey(identityKey: key, counter: 0x0003_0000) != before)
    }

    @Test func keyExchangeGivesEidtoolsIdentityKeyOnBothSides() throws {
        for exchange in Self.vectors.key_exchanges {
            let resolverPublic = Self.bytes(exchange.resolver_public_key)
            let beaconPublic = Self.bytes(exchange.beacon_public_key)
            #expect(try X25519.publicKey(privateKey: Self.bytes(exchange.beacon_private_key)) == beaconPublic)
            #expect(try X25519.publicKey(privateKey: Self.bytes(exchange.resolver_private_key)) == resolverPublic)
            let shared = try X25519.sharedSecret(privateKey: Self.bytes(exchange.beacon_private_key), publicKey: resolverPublic)
            #expect(Self.hex(shared) == exchange.shared_secret)
            let beaconSide = try EddystoneEID.identityKey(
                privateKey: Self.bytes(exchange.beacon_private_key), peerPublicKey: resolverPublic,
                resolverPublicKey: resolverPublic, beaconPublicKey: beaconPublic)
            let resolverSide = try EddystoneEID.identityKey(
                privateKey: Self.bytes(exchange.resolver_private_key), peerPublicKey: beaconPublic,
                resolverPublicKey: resolverPublic, beaconPublicKey: beaconPublic)
            #expect(Self.hex(beaconSide) == exchange.identity_key)
            #expect(resolverSide == beaconSide)
            let eid = try EddystoneEID.ephemeralID(identityKey: beaconSide, exponent: 10, counter: 65280)
            #expect(Self.hex(eid) == exchange.eid_exponent_10_counter_65280)
        }
    }

    /// A public key of low order (zero) gives a zero secret: refused, as the spec says.
    @Test func zeroSharedSecretIsRefused() {
        let privateKey = [UInt8](repeating: 0x42, count: 32)
        #expect(throws: CryptoError.zeroSharedSecret) {
            try X25519.sharedSecret(privateKey: privateKey, publicKey: [UInt8](repeating: 0, count: 32))
        }
    }

    @Test func exponentAbove15AndWrongKeyLengthsAreRefused() {
        let key = [UInt8](repeating: 1, count: 16)
        #expect(throws: CryptoError.exponentOutOfRange(16)) { try EddystoneEID.ephemeralID(identityKey: key, exponent: 16, counter: 0) }
        #expect(throws: CryptoError.wrongLength) { try EddystoneEID.temporaryKey(identityKey: Array(key.prefix(15)), counter: 0) }
    }

    /// FIPS 197 appendix C.1, RFC 7748 section 6.1 and RFC 5869 test case 1.
    @Test func primitivesMatchTheirStandards() throws {
        let aes = try AES128.encrypt(
            block: Self.bytes("00112233445566778899aabbccddeeff"), key: Self.bytes("000102030405060708090a0b0c0d0e0f"))
        #expect(Self.hex(aes) == "69c4e0d86a7b0430d8cdb78070b4c55a")
        let alice = Self.bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let bob = Self.bytes("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        #expect(Self.hex(try X25519.publicKey(privateKey: alice)) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(Self.hex(try X25519.sharedSecret(privateKey: alice, publicKey: bob)) == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        let okm = try HKDF.sha256(
            secret: [UInt8](repeating: 0x0b, count: 22), salt: Self.bytes("000102030405060708090a0b0c"),
            info: Self.bytes("f0f1f2f3f4f5f6f7f8f9"), count: 42)
        #expect(Self.hex(okm) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }
}
