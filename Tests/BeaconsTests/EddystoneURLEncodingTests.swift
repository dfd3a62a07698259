import Beacons
import Testing

@Suite struct EddystoneURLEncodingTests {
    /// Each scheme prefix and expansion, the longest first, and decoding gives the URL back.
    @Test(arguments: [
        ("https://www.example.com/", [UInt8(1)], [UInt8(0x65), 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x00]),
        ("http://www.a.org", [0], [0x61, 0x08]),
        ("http://a.info/b", [2], [0x61, 0x04, 0x62]),
        ("https://x.gov", [3], [0x78, 0x0D]),
        ("https://goo.gl/S6zT6P", [3], Array("goo.gl/S6zT6P".utf8)),
    ])
    func encodesWithTheSchemesAndExpansions(url: String, scheme: [UInt8], encoded: [UInt8]) throws {
        let encoding = try #require(EddystoneURL(encoding: url))
        #expect(encoding.scheme == scheme[0])
        #expect(encoding.encoded == encoded)
        #expect(encoding.description == url)
        let data = AdvertisingData.eddystone(.url(encoding, rangingPower: -20))
        #expect(try AdvertisingData.frames(in: data) == [.eddystone(.url(encoding, rangingPower: -20))])
    }

    @Test(arguments: [
        "ftp://example.com", "example.com", "https://", "https://www.an-address-far-too-long.com",
        "https://café.fr", "https://a b.com",
    ])
    func refusesWhatTheSpecCannotCarry(url: String) {
        #expect(EddystoneURL(encoding: url) == nil)
    }
}
