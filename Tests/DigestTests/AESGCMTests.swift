import Digest
import Testing

@Suite struct AESGCMTests {
    private func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// The test cases of McGrew and Viega's GCM specification for 256-bit keys: 14 (no associated data) and 16.
    @Test func matchesTheGCMSpecificationsVectors() throws {
        let zeroKey = [UInt8](repeating: 0, count: 32)
        let zeroNonce = [UInt8](repeating: 0, count: 12)
        let fourteen = try AESGCM.seal(
            [UInt8](repeating: 0, count: 16), key: zeroKey, nonce: zeroNonce, associatedData: [])
        #expect(fourteen == bytes("cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919"))

        let key = bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = bytes("cafebabefacedbaddecaf888")
        let plaintext = bytes(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
                + "b16aedf5aa0de657ba637b39")
        let associatedData = bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
        #expect(
            sealed
                == bytes(
                    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838"
                        + "c5f61e6393ba7a0abcc9f662" + "76fc6ece0f4e1768cddf8853bb2d551b"))
        #expect(try AESGCM.open(sealed, key: key, nonce: nonce, associatedData: associatedData) == plaintext)
    }

    /// A flipped bit anywhere, other associated data or another key: no plaintext, an authentication failure.
    @Test func whatWasNotSealedDoesNotOpen() throws {
        let key = [UInt8](repeating: 7, count: 32)
        let nonce = [UInt8](repeating: 9, count: 12)
        let sealed = try AESGCM.seal(Array(0..<16), key: key, nonce: nonce, associatedData: [1, 2])
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 1
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(tampered, key: key, nonce: nonce, associatedData: [1, 2])
            }
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: key, nonce: nonce, associatedData: [1, 3])
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: [UInt8](repeating: 8, count: 32), nonce: nonce, associatedData: [1, 2])
        }
        #expect(throws: CryptoError.wrongLength) { try AESGCM.open([1], key: key, nonce: nonce, associatedData: []) }
    }
}
