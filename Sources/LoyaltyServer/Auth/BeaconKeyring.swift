import Digest
import Foundation
import LoyaltyAPI

/// The server keys that seal secure beacons' identity keys at rest (AES-256-GCM), read from the operator's key file:
/// one key a line, 64 hex digits, `#` comments. The first line's key seals; every line's key opens, so a rotation
/// puts the new key first and keeps the old below it until the server's start has sealed every beacon anew
/// (docs/SECURE-BEACONS.md). A key's id is the first 8 hex digits of its SHA-256: rows name the key that sealed
/// them, never the key.
public struct BeaconKeyring: Sendable {
    struct Key: Sendable {
        let id: String
        let bytes: [UInt8]

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            id = Hex.text(Array(SHA256.hash(bytes).prefix(4)))
        }
    }

    /// Why a key file is not one.
    public struct FileError: Error, CustomStringConvertible {
        public let description: String
    }

    let keys: [Key]
    var current: Key { keys[0] }

    /// The keys of a key file's text.
    public init(fileText: String) throws(FileError) {
        var keys: [Key] = []
        for (number, line) in fileText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, !text.hasPrefix("#") else { continue }
            guard let bytes = Hex.bytes(text), bytes.count == AESGCM.keyLength else {
                throw FileError(description: "line \(number + 1): expected a key of 64 hex digits")
            }
            keys.append(Key(bytes))
        }
        guard !keys.isEmpty else { throw FileError(description: "no key: expected a line of 64 hex digits") }
        self.keys = keys
    }

    /// The keys of the key file `file`; its errors name it.
    public init(file: URL) throws(FileError) {
        do {
            try self.init(fileText: try String(contentsOf: file, encoding: .utf8))
        } catch {
            throw FileError(description: "beacon key file \(file.path): \(error)")
        }
    }

    /// A key file's text with one new random key.
    public static func newFileText() -> String {
        "# loyalty-server beacon key: seals secure beacons' identity keys (docs/SECURE-BEACONS.md)\n"
            + Hex.text(Secrets.randomBytes(AESGCM.keyLength)) + "\n"
    }

    /// One random key: a server in process (tests, the bench) whose beacons live as long as its database.
    public static func random() -> BeaconKeyring {
        try! BeaconKeyring(fileText: newFileText())
    }

    /// `secret` sealed under the current key: a random nonce, then the ciphertext and tag. `binding` (what the
    /// secret belongs to) is authenticated with it, so a sealed key copied to another row does not open there.
    func seal(_ secret: [UInt8], binding: [UInt8]) throws -> (keyID: String, sealed: [UInt8]) {
        let nonce = Secrets.randomBytes(AESGCM.nonceLength)
        return (current.id, nonce + (try AESGCM.seal(secret, key: current.bytes, nonce: nonce, associatedData: binding)))
    }

    /// A secure beacon's identity key sealed as provisioning seals it, for its row of `secure_beacons`: how the bench
    /// loads 100,000 beacons in one statement.
    public func sealIdentityKey(_ identityKey: [UInt8], retailerID: UUID, major: UInt16, minor: UInt16) throws -> (
        keyID: String, sealed: [UInt8]
    ) {
        try seal(identityKey, binding: SecureBeacon.binding(retailerID: retailerID, major: major, minor: minor))
    }

    /// The secret `seal` sealed under the key `keyID`; nil when this keyring lacks that key.
    func open(_ sealed: [UInt8], keyID: String, binding: [UInt8]) throws -> [UInt8]? {
        guard let key = keys.first(where: { $0.id == keyID }), sealed.count > AESGCM.nonceLength else { return nil }
        return try AESGCM.open(
            Array(sealed.dropFirst(AESGCM.nonceLength)), key: key.bytes,
            nonce: Array(sealed.prefix(AESGCM.nonceLength)), associatedData: binding)
    }
}
