import Digest
import Testing

@Suite struct SHA256Tests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(UInt16($0) + 0x100, radix: 16).dropFirst() }.joined()
    }

    @Test func matchesTheFIPSVectors() {
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // A million 'a's (FIPS 180-2, appendix B.3): many blocks.
        #expect(
            hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// A string's bytes are hashed where they lie; a collection without contiguous storage is copied first, to the
    /// same digest.
    @Test func anyCollectionOfBytesHashesAlike() {
        let token = "lk_" + String(repeating: "Zz9-_", count: 13)
        let expected = SHA256.hash(Array(token.utf8))
        #expect(SHA256.hash(token.utf8) == expected)
        #expect(SHA256.hash(token.utf8.lazy.map { $0 }) == expected)
        #expect(SHA256.hash(Array(token.utf8)[...]) == expected)
    }
}
