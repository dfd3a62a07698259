import Digest
import Foundation

/// The service's side of the Eddystone-EID key exchange: an X25519 key pair per retailer and server key, derived
/// (HKDF-SHA256 of the server key, salted with the retailer's id), so it is stored nowhere, every instance with the
/// same key file has it, and no two retailers share one. A beacon given the public key before a rotation of the
/// server key still registers while the old key is in the file.
extension BeaconKeyring {
    /// The current server key's public key for the retailer: what `GET /v1/retailer/eid-params` answers.
    func exchangePublicKey(retailerID: UUID) throws -> [UInt8] {
        try X25519.publicKey(privateKey: try Self.exchangePrivateKey(current, retailerID: retailerID))
    }

    /// The private key whose public key is `publicKey`, under any key of the file; nil when none is.
    func exchangePrivateKey(publicKey: [UInt8], retailerID: UUID) throws -> [UInt8]? {
        for key in keys {
            let privateKey = try Self.exchangePrivateKey(key, retailerID: retailerID)
            if Secrets.constantTimeEqual(try X25519.publicKey(privateKey: privateKey), publicKey) { return privateKey }
        }
        return nil
    }

    private static func exchangePrivateKey(_ key: Key, retailerID: UUID) throws -> [UInt8] {
        try HKDF.sha256(
            secret: key.bytes, salt: Array(retailerID.uuidString.lowercased().utf8),
            info: Array("loyalty eddystone-eid service x25519".utf8), count: 32)
    }
}
