import Compression
import Testing

@Suite struct GzipTests {
    /// JSON-like text of repeated keys, as a catalog page is.
    private static let catalogLike = Array(
        (0..<2000).map { #"{"id":"\#($0)","title":"Offer \#($0)","major":1,"minor":\#($0 % 7)}"# }
            .joined(separator: ",").utf8)

    @Test func aRoundTripGivesTheSameBytesAndIsSmaller() throws {
        for input in [[], [0x41], Self.catalogLike, (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }] {
            let packed = Gzip.compress(input)
            #expect(packed.prefix(2) == [0x1F, 0x8B], "a gzip member starts with its magic")
            #expect(try Gzip.decompress(packed, limit: input.count) == input)
        }
        #expect(Gzip.compress(Self.catalogLike).count * 5 < Self.catalogLike.count)
    }

    /// A few kilobytes that expand to many megabytes stop at the limit instead of filling memory.
    @Test func aBombStopsAtTheLimit() throws {
        let bomb = Gzip.compress([UInt8](repeating: 0, count: 64 << 20), level: 9)
        #expect(bomb.count < 100_000)
        #expect(throws: GzipError.tooLarge(limit: 1 << 20)) { try Gzip.decompress(bomb, limit: 1 << 20) }
    }

    @Test func brokenStreamsAreRefused() throws {
        let packed = Gzip.compress(Self.catalogLike)
        var flipped = packed
        flipped[flipped.count - 6] ^= 0xFF  // the CRC-32 no longer matches
        for broken in [Array("plain text".utf8), Array(packed.prefix(packed.count / 2)), flipped, packed + [0]] {
            #expect(throws: GzipError.self) { try Gzip.decompress(broken, limit: 1 << 20) }
        }
    }
}
