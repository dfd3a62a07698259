import BeaconRadio
import Testing

/// The H4 framer from bytes: packets split across reads and merged in one, and lost framing.
@Suite struct H4FramerTests {
    /// Command Complete for LE Read Local Supported Features, and an LE Advertising Report header.
    static let commandComplete: [UInt8] = [0x04, 0x0E, 0x0C, 0x01, 0x03, 0x20, 0x00, 1, 2, 3, 4, 5, 6, 7, 8]
    static let leMeta: [UInt8] = [0x04, 0x3E, 0x03, 0x02, 0x01, 0x00]
    /// ACL data with a two-byte length (260: over one byte), which must be skipped whole.
    static let acl: [UInt8] = [0x02, 0x01, 0x20, 0x04, 0x01] + [UInt8](repeating: 0x04, count: 260)

    private func drain(_ framer: inout H4Framer) throws -> [H4Framer.Packet] {
        var packets: [H4Framer.Packet] = []
        while let packet = try framer.next() { packets.append(packet) }
        return packets
    }

    @Test func packetsMergedInOneReadComeOutOneByOne() throws {
        var framer = H4Framer(source: "test")
        framer.append(Self.commandComplete + Self.acl + Self.leMeta)
        let packets = try drain(&framer)
        #expect(packets.map(\.indicator) == [0x04, 0x02, 0x04])
        #expect(packets[0].bytes == Array(Self.commandComplete.dropFirst()))
        #expect(packets[1].bytes.count == 4 + 260)
        #expect(packets[2].bytes == Array(Self.leMeta.dropFirst()))
    }

    @Test func aPacketSplitAcrossReadsAtEveryByteIsReassembled() throws {
        let stream = Self.leMeta + Self.acl + Self.commandComplete
        for cut in 1..<stream.count {
            var framer = H4Framer(source: "test")
            framer.append(stream[..<cut])
            var packets = try drain(&framer)
            framer.append(stream[cut...])
            packets += try drain(&framer)
            #expect(packets.map(\.indicator) == [0x04, 0x02, 0x04], "cut at \(cut)")
            #expect(packets.last?.bytes == Array(Self.commandComplete.dropFirst()), "cut at \(cut)")
        }
    }

    @Test func byteByByteReadsGiveTheSamePackets() throws {
        var framer = H4Framer(source: "test")
        var packets: [H4Framer.Packet] = []
        for byte in Self.commandComplete + Self.leMeta {
            framer.append([byte])
            packets += try drain(&framer)
        }
        #expect(packets.map(\.bytes) == [Array(Self.commandComplete.dropFirst()), Array(Self.leMeta.dropFirst())])
    }

    @Test func anUnknownIndicatorIsLostFramingAndStaysLost() throws {
        var framer = H4Framer(source: "tcp:127.0.0.1:6402")
        framer.append(Self.leMeta + [0x48, 0x54, 0x54, 0x50] + Self.leMeta)
        #expect(try framer.next()?.indicator == 0x04)
        #expect(throws: RadioError.framingLost("tcp:127.0.0.1:6402", indicator: 0x48)) { try framer.next() }
        framer.append(Self.leMeta)
        #expect(throws: RadioError.framingLost("tcp:127.0.0.1:6402", indicator: 0x48)) { try framer.next() }
    }

    @Test func theTransportTextsParseAndPrintBack() {
        #expect(HCITransport(parsing: "hci1") == .kernel("hci1"))
        #expect(HCITransport(parsing: "tcp:127.0.0.1:6402") == .tcp(host: "127.0.0.1", port: 6402))
        #expect(HCITransport(parsing: "tcp:[::1]:6402") == .tcp(host: "::1", port: 6402))
        #expect(HCITransport(parsing: "unix:/run/h4.sock") == .unix(path: "/run/h4.sock"))
        #expect(HCITransport(parsing: "serial:/dev/ttyACM0") == .serial(device: "/dev/ttyACM0", baud: 115_200))
        #expect(HCITransport(parsing: "serial:/dev/ttyUSB0:1000000") == .serial(device: "/dev/ttyUSB0", baud: 1_000_000))
        for bad in ["hci", "hcix", "tcp:host", "tcp:host:0", "tcp::6402", "unix:", "serial:", "serial:/dev/tty:123", "usb:1"] {
            #expect(HCITransport(parsing: bad) == nil, "\(bad)")
        }
        #expect(HCITransport.tcp(host: "::1", port: 6402).description == "tcp:[::1]:6402")
    }

    /// `--adapter` and `--hci` take the same names: `hci` and ASCII digits, nothing a D-Bus object path refuses.
    @Test func adapterNamesAreHciAndASCIIDigits() {
        for good in ["hci0", "hci12"] {
            #expect(HCITransport.isAdapterName(good) && HCITransport(parsing: good) == .kernel(good), "\(good)")
        }
        for bad in ["", "hci", "hcix", "usb0", "hci 0", "hci-0", "hci\u{663}", "hci0\u{301}", "HCI0", " hci0", "hci0/x"] {
            #expect(!HCITransport.isAdapterName(bad) && HCITransport(parsing: bad) == nil, "\(bad)")
        }
    }
}
