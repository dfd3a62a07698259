import HTTPServer
import Testing

/// A version 2 header as HAProxy's send-proxy-v2 writes it: `command` 1 is PROXY, 0 LOCAL; `family` 1 IPv4,
/// 2 IPv6 (transport 1, stream); `length` overrides the length field.
func proxyHeader(
    command: UInt8 = 0x1, familyAndTransport: UInt8 = 0x11, addresses: [UInt8], length: Int? = nil
) -> [UInt8] {
    let length = length ?? addresses.count
    return ProxyProtocolHeader.signature + [0x20 | command, familyAndTransport, UInt8(length >> 8), UInt8(length & 0xFF)]
        + addresses
}

/// IPv4 source and destination addresses and ports, in the header's order.
func ipv4Addresses(source: [UInt8], sourcePort: UInt16, destination: [UInt8] = [127, 0, 0, 1], port: UInt16 = 8080)
    -> [UInt8]
{
    source + destination + [UInt8(sourcePort >> 8), UInt8(sourcePort & 0xFF), UInt8(port >> 8), UInt8(port & 0xFF)]
}

@Suite struct ProxyProtocolHeaderTests {
    @Test func anIPv4HeaderNamesTheClientAndEndsWhereItSays() throws {
        let header = proxyHeader(addresses: ipv4Addresses(source: [192, 0, 2, 7], sourcePort: 51234))
        let request = Array("GET / HTTP/1.1\r\n".utf8)
        #expect(try ProxyProtocolHeader.length(ofHeaderStartingWith: header) == 28)
        let parsed = try ProxyProtocolHeader(parsing: header + request)
        #expect(parsed.length == 28)
        #expect(parsed.source?.address.description == "192.0.2.7")
        #expect(parsed.source?.port == 51234)
    }

    @Test func anIPv6HeaderWithTLVsNamesTheClient() throws {
        let source: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [0x09]
        let destination = Array(repeating: UInt8(0), count: 15) + [1]
        // A PP2_TYPE_UNIQUE_ID TLV after the addresses, as `proxy-v2-options unique-id` adds.
        let tlv: [UInt8] = [0x05, 0x00, 0x03, 0x61, 0x62, 0x63]
        let header = proxyHeader(familyAndTransport: 0x21, addresses: source + destination + [0x1F, 0x90, 0x00, 0x50] + tlv)
        let parsed = try ProxyProtocolHeader(parsing: header)
        #expect(parsed.source?.address.description == "2001:db8::9")
        #expect(parsed.source?.port == 8080)
        #expect(parsed.length == 16 + 36 + tlv.count)
    }

    @Test func localAndUnspecifiedHeadersLeaveTheConnectionsOwnAddress() throws {
        // A health check: LOCAL, family UNSPEC, no addresses.
        let local = try ProxyProtocolHeader(parsing: proxyHeader(command: 0x0, familyAndTransport: 0x00, addresses: []))
        #expect(local.source == nil && local.length == 16)
        // LOCAL with addresses: they are skipped, not read.
        let localWithAddresses = try ProxyProtocolHeader(
            parsing: proxyHeader(command: 0x0, addresses: ipv4Addresses(source: [10, 0, 0, 1], sourcePort: 1)))
        #expect(localWithAddresses.source == nil && localWithAddresses.length == 28)
        let unspecified = try ProxyProtocolHeader(parsing: proxyHeader(familyAndTransport: 0x00, addresses: []))
        #expect(unspecified.source == nil)
        let unix = try ProxyProtocolHeader(
            parsing: proxyHeader(familyAndTransport: 0x31, addresses: Array(repeating: 0x2F, count: 216)))
        #expect(unix.source == nil)
    }

    @Test func anIPv4MappedSourceReadsAsIPv4() throws {
        let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF, 198, 51, 100, 4]
        let header = proxyHeader(
            familyAndTransport: 0x21, addresses: mapped + Array(repeating: 0, count: 16) + [0, 80, 0, 80])
        #expect(try ProxyProtocolHeader(parsing: header).source?.address.description == "198.51.100.4")
    }

    @Test func malformedHeadersAreTypedErrors() {
        let valid = proxyHeader(addresses: ipv4Addresses(source: [192, 0, 2, 7], sourcePort: 1))
        var badVersion = valid
        badVersion[12] = 0x11
        var badCommand = valid
        badCommand[12] = 0x22
        var wrongSignature = valid
        wrongSignature[11] = 0x0B
        let cases: [([UInt8], ProxyProtocolError)] = [
            ([], .truncated(received: 0, needed: 16)),
            (Array(valid.prefix(7)), .truncated(received: 7, needed: 16)),
            (Array(valid.prefix(20)), .truncated(received: 20, needed: 28)),
            (wrongSignature, .noSignature),
            (Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), .noSignature),
            (Array("PROXY TCP4 192.0.2.7 127.0.0.1 1 8080\r\n".utf8), .version1),
            (Array("PROX".utf8), .version1),
            (badVersion, .unsupportedVersion(1)),
            (badCommand, .unsupportedCommand(2)),
            (proxyHeader(familyAndTransport: 0x41, addresses: []), .unsupportedFamily(4)),
            (proxyHeader(familyAndTransport: 0x13, addresses: ipv4Addresses(source: [1, 2, 3, 4], sourcePort: 1)),
             .unsupportedTransport(3)),
            // UDP is a transport the header may name, not one an HTTP connection has.
            (proxyHeader(familyAndTransport: 0x12, addresses: ipv4Addresses(source: [1, 2, 3, 4], sourcePort: 1)),
             .unsupportedTransport(2)),
            // The length field says fewer bytes than the family's addresses take.
            (proxyHeader(addresses: Array(repeating: 1, count: 8)), .addressesTooShort(family: 1, length: 8, needed: 12)),
            (proxyHeader(familyAndTransport: 0x21, addresses: Array(repeating: 1, count: 12)),
             .addressesTooShort(family: 2, length: 12, needed: 36)),
            // The largest length the field holds, and one just past the limit: refused before any is read.
            (proxyHeader(addresses: [], length: 0xFFFF), .tooLong(16 + 0xFFFF)),
            (proxyHeader(addresses: [], length: ProxyProtocolHeader.maxLength - 15), .tooLong(ProxyProtocolHeader.maxLength + 1)),
        ]
        for (bytes, expected) in cases {
            #expect(throws: expected, "\(bytes)") { try ProxyProtocolHeader(parsing: bytes) }
        }
    }

    /// Every prefix and every single-byte change of a valid header: an answer or a typed error, never a trap
    /// or a read past the bytes given.
    @Test func everyTruncationAndByteFlipIsHandled() {
        let valid = proxyHeader(
            familyAndTransport: 0x21, addresses: Array(repeating: 7, count: 36) + [0x05, 0x00, 0x01, 0x41])
        for count in 0..<valid.count {
            #expect(throws: ProxyProtocolError.self) { try ProxyProtocolHeader(parsing: Array(valid.prefix(count))) }
        }
        for index in valid.indices {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF] {
                var changed = valid
                changed[index] = value
                if let parsed = try? ProxyProtocolHeader(parsing: changed) { #expect(parsed.length <= changed.count) }
            }
        }
    }
}

@Suite struct ClientAddressPolicyTests {
    private let policy = ClientAddressPolicy(
        trustedProxies: ["10.0.0.0/24", "127.0.0.1", "2001:db8:1::/48"].compactMap(IPAddressRange.init))

    @Test func rangesParseAsCIDRBlocks() throws {
        let block = try #require(IPAddressRange("10.1.0.0/16"))
        #expect(block.contains(try #require(IPAddress("10.1.255.3"))))
        #expect(!block.contains(try #require(IPAddress("10.2.0.1"))))
        #expect(!block.contains(try #require(IPAddress("::ffff:10.2.0.1"))))
        #expect(block.contains(try #require(IPAddress("::ffff:10.1.0.1"))))
        #expect(IPAddressRange("0.0.0.0/0")?.contains(try #require(IPAddress("203.0.113.1"))) == true)
        #expect(IPAddressRange("::/0")?.contains(try #require(IPAddress("203.0.113.1"))) == false)
        #expect(IPAddressRange("2001:db8::/32")?.description == "2001:db8::/32")
        #expect(IPAddressRange("192.0.2.9")?.description == "192.0.2.9/32")
        for bad in ["", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.1/8", "10.0.0.0/8/8", "example.com/8",
            "10.0.0/8", "::1/129", "10.0.0.0/ 8", "10.0.0.0/٨"]
        {
            #expect(IPAddressRange(bad) == nil, "\(bad)")
        }
    }

    @Test func aTrustedPeersForwardedForNamesTheRightMostUntrustedAddress() {
        #expect(policy.client(peer: "10.0.0.5", forwardedFor: "203.0.113.9") == ("203.0.113.9", false))
        // The client wrote the left-most entry itself; the proxies appended the rest.
        #expect(
            policy.client(peer: "10.0.0.5", forwardedFor: "1.1.1.1, 198.51.100.2, 10.0.0.7")
                == ("198.51.100.2", false))
        #expect(policy.client(peer: "127.0.0.1", forwardedFor: "2001:db8:2::1") == ("2001:db8:2::1", false))
        // Every entry a proxy: the left-most is the nearest thing to a client there is.
        #expect(policy.client(peer: "10.0.0.5", forwardedFor: "10.0.0.9, 127.0.0.1") == ("10.0.0.9", false))
        // An entry that is not an address ends the walk at the proxy that added it.
        #expect(policy.client(peer: "10.0.0.5", forwardedFor: "198.51.100.2, evil\u{1B}[2J, 10.0.0.7") == ("10.0.0.7", false))
        #expect(policy.client(peer: "10.0.0.5", forwardedFor: "") == ("10.0.0.5", false))
        #expect(policy.client(peer: "10.0.0.5", forwardedFor: nil) == ("10.0.0.5", false))
    }

    @Test func anUntrustedPeersForwardedForIsIgnoredAndSaidSo() {
        #expect(policy.client(peer: "10.0.1.5", forwardedFor: "203.0.113.9") == ("10.0.1.5", true))
        #expect(policy.client(peer: "10.0.1.5", forwardedFor: nil) == ("10.0.1.5", false))
        #expect(ClientAddressPolicy().client(peer: "127.0.0.1", forwardedFor: "203.0.113.9") == ("127.0.0.1", true))
    }
}
