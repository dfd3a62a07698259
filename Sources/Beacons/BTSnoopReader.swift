import SystemCalls

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// H4 packet indicators (Core spec Vol 4, Part A), the packet types a capture holds.
public enum HCIPacketType: UInt8, Hashable, Sendable {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05
}

public enum HCIDirection: Hashable, Sendable {
    /// Commands and outgoing data.
    case hostToController
    /// Events and incoming data.
    case controllerToHost
}

/// The link type in a BTSnoop header: how each record says what kind of packet it holds.
public enum BTSnoopDatalink: UInt32, Hashable, Sendable {
    /// HCI without the H4 byte: flags bit 1 = command/event (else data), bit 0 = received.
    case hci = 1001
    /// H4 (Android's btsnoop_hci.log): the first byte of each packet is its H4 indicator.
    case h4 = 1002
    /// BlueZ monitor (`btmon -w`): flags = adapter index << 16 | opcode (2 command, 3 event, 4/5 ACL, ...).
    case monitor = 2001
}

/// A BTSnoop timestamp: microseconds since midnight, 1 January of year 0, as the record stores it.
///
/// The Unix epoch is taken to be 0x00DCDDB30F2F8000 microseconds after that origin, the constant Android's
/// writer and Wireshark's reader use. (BlueZ writes with another origin; its files read 378 days off in absolute
/// terms, but intervals, which replay needs, are exact either way.)
public struct BTSnoopTimestamp: Hashable, Comparable, Sendable {
    public static let unixEpoch: Int64 = 0x00DC_DDB3_0F2F_8000

    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public init(unixMicroseconds: Int64) { microseconds = unixMicroseconds &+ Self.unixEpoch }

    public init(unixSeconds: Double) { self.init(unixMicroseconds: Int64((unixSeconds * 1_000_000).rounded())) }

    public var unixMicroseconds: Int64 { microseconds &- Self.unixEpoch }

    /// Seconds since the Unix epoch: the clock replay runs on.
    public var unixSeconds: Double { Double(unixMicroseconds) / 1_000_000 }

    public static func < (lhs: BTSnoopTimestamp, rhs: BTSnoopTimestamp) -> Bool { lhs.microseconds < rhs.microseconds }
}

/// A capture that cannot be read (further). `offset` is the byte of the file where the problem starts: for a
/// damaged record, its first byte. Every record before it was delivered.
public struct BTSnoopError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The file does not start with "btsnoop\0".
        case notBTSnoop
        case unsupportedVersion(UInt32)
        case unsupportedDatalink(UInt32)
        /// The file ends inside the 16-byte file header.
        case truncatedHeader
        /// The file ends inside a record's header or its packet data.
        case truncatedRecord(needed: Int, available: Int)
        /// A record claims more bytes than any HCI packet can have: the file is corrupt here.
        case recordTooLarge(Int)
        case openFailed(path: String, errno: Int32)
        case readFailed(errno: Int32)
        case writeFailed(errno: Int32)
    }

    public var reason: Reason
    public var offset: Int

    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        switch reason {
        case .notBTSnoop: "not a BTSnoop file (no \"btsnoop\" magic at byte 0)"
        case .unsupportedVersion(let version): "BTSnoop version \(version) is not supported (only 1), at byte \(offset)"
        case .unsupportedDatalink(let datalink):
            "BTSnoop datalink \(datalink) is not supported (1001 HCI, 1002 H4, 2001 monitor), at byte \(offset)"
        case .truncatedHeader: "BTSnoop file ends inside its header, at byte \(offset)"
        case .truncatedRecord(let needed, let available):
            "BTSnoop record at byte \(offset) is truncated: needs \(needed) bytes, the file has \(available)"
        case .recordTooLarge(let length):
            "BTSnoop record at byte \(offset) is corrupt: it claims \(length) bytes"
        case .openFailed(let path, let code): "cannot open \(path): \(errorText(code))"
        case .readFailed(let code): "read failed at byte \(offset): \(errorText(code))"
        case .writeFailed(let code): "write failed at byte \(offset): \(errorText(code))"
        }
    }
}

/// One record of a capture, borrowing the reader's buffer: valid until the reader's next call.
public struct BTSnoopRecord {
    /// File offset of the record's header.
    public var offset: Int
    public var originalLength: Int
    public var flags: UInt32
    public var cumulativeDrops: UInt32
    public var timestamp: BTSnoopTimestamp
    /// Nil when the record is not an HCI packet (monitor notes, index events) or its type is unknown.
    public var packetType: HCIPacketType?
    public var direction: HCIDirection
    /// BlueZ monitor captures only: the adapter the packet went through.
    public var adapterIndex: UInt16?
    /// The packet without any H4 byte: for an event, event code, parameter length, parameters.
    public var packet: UnsafeRawBufferPointer
}

/// Reads a BTSnoop capture from a file descriptor in big chunks, in constant memory, one record at a time.
///
/// The buffer holds `bufferSize` bytes (at least one maximal record), whatever the file's size. A truncated or
/// corrupt record throws `BTSnoopError` naming its byte offset after every record before it was returned.
public final class BTSnoopReader {
    /// Records longer than this are corrupt (Wireshark's limit too); it bounds the buffer.
    public static let maximumRecordLength = 262_144
    static let fileHeaderLength = 16
    static let recordHeaderLength = 24
    static let magic: [UInt8] = Array("btsnoop\0".utf8)

    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let buffer: UnsafeMutableRawBufferPointer
    // Read per record by one task at a time: unchecked for the reason `AdvertisingCapture` gives.
    @exclusivity(unchecked) public private(set) var datalink: BTSnoopDatalink
    @exclusivity(unchecked) private var start = 0
    @exclusivity(unchecked) private var end = 0
    /// File offset of `buffer[start]`.
    @exclusivity(unchecked) private var fileOffset = 0
    @exclusivity(unchecked) private var atEndOfFile = false
    @exclusivity(unchecked) private var failure: BTSnoopError?

    /// Reads and checks the file header. The descriptor stays the caller's to close.
    public convenience init(fileDescriptor: Int32, bufferSize: Int = 1 << 20) throws(BTSnoopError) {
        try self.init(descriptor: fileDescriptor, owns: false, bufferSize: bufferSize)
    }

    /// Opens `path` and reads its header; the reader closes the file.
    public convenience init(path: String, bufferSize: Int = 1 << 20) throws(BTSnoopError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BTSnoopError(.openFailed(path: path, errno: errno), offset: 0) }
        try self.init(descriptor: descriptor, owns: true, bufferSize: bufferSize)
    }

    private init(descriptor: Int32, owns: Bool, bufferSize: Int) throws(BTSnoopError) {
        self.descriptor = descriptor
        ownsDescriptor = owns
        buffer = .allocate(
            byteCount: max(bufferSize, Self.recordHeaderLength + Self.maximumRecordLength),
            alignment: MemoryLayout<UInt64>.alignment)
        datalink = .h4  // until the header says otherwise
        datalink = try readFileHeader()  // on error, deinit frees what init took
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { _ = closeDescriptor(descriptor) }
    }

    private func readFileHeader() throws(BTSnoopError) -> BTSnoopDatalink {
        guard try available(Self.fileHeaderLength) else {
            let present = UnsafeRawBufferPointer(rebasing: buffer[0..<min(end, Self.magic.count)])
            let magicSoFar = present.elementsEqual(Self.magic.prefix(present.count))
            throw BTSnoopError(magicSoFar ? .truncatedHeader : .notBTSnoop, offset: 0)
        }
        let bytes = UnsafeRawBufferPointer(buffer)
        guard Self.magic.elementsEqual(bytes.slice(0, count: 8)) else { throw BTSnoopError(.notBTSnoop, offset: 0) }
        let version = bytes.uint32BigEndian(at: 8)
        guard version == 1 else { throw BTSnoopError(.unsupportedVersion(version), offset: 8) }
        let code = bytes.uint32BigEndian(at: 12)
        guard let datalink = BTSnoopDatalink(rawValue: code) else {
            throw BTSnoopError(.unsupportedDatalink(code), offset: 12)
        }
        consume(Self.fileHeaderLength)
        return datalink
    }

    /// The next record, or nil at a clean end of file. After an error, every call throws it again.
    @inline(__always)
    public func next() throws(BTSnoopError) -> BTSnoopRecord? {
        if let failure { throw failure }
        do {
            return try readRecord()
        } catch {
            failure = error
            throw error
        }
    }

    @inline(__always)
    private func readRecord() throws(BTSnoopError) -> BTSnoopRecord? {
        guard try available(Self.recordHeaderLength) else {
            guard end == start else {
                throw BTSnoopError(
                    .truncatedRecord(needed: Self.recordHeaderLength, available: end - start), offset: fileOffset)
            }
            return nil
        }
        let offset = fileOffset
        let header = UnsafeRawBufferPointer(start: buffer.baseAddress! + start, count: Self.recordHeaderLength)
        let includedLength = Int(header.uint32BigEndian(at: 4))
        guard includedLength <= Self.maximumRecordLength else {
            throw BTSnoopError(.recordTooLarge(includedLength), offset: offset)
        }
        let recordLength = Self.recordHeaderLength + includedLength
        guard try available(recordLength) else {
            throw BTSnoopError(.truncatedRecord(needed: recordLength, available: end - start), offset: offset)
        }
        // `available` may have moved the bytes to the front of the buffer.
        let record = UnsafeRawBufferPointer(start: buffer.baseAddress! + start, count: recordLength)
        consume(recordLength)
        let flags = record.uint32BigEndian(at: 8)
        var bytes = record.slice(Self.recordHeaderLength, count: includedLength)
        var packetType: HCIPacketType? = nil
        var direction: HCIDirection = flags & 1 == 0 ? .hostToController : .controllerToHost
        var adapterIndex: UInt16? = nil
        switch datalink {
        case .h4:
            if let first = bytes.first {
                packetType = HCIPacketType(rawValue: first)
                bytes = bytes.slice(1, count: bytes.count - 1)
            }
        case .hci:
            packetType = flags & 2 != 0 ? (flags & 1 != 0 ? .event : .command) : .acl
        case .monitor:
            adapterIndex = UInt16(truncatingIfNeeded: flags >> 16)
            if let (type, monitorDirection) = MonitorOpcode.packet(UInt16(truncatingIfNeeded: flags)) {
                packetType = type
                direction = monitorDirection
            }
        }
        return BTSnoopRecord(
            offset: offset, originalLength: Int(record.uint32BigEndian(at: 0)), flags: flags,
            cumulativeDrops: record.uint32BigEndian(at: 12),
            timestamp: BTSnoopTimestamp(microseconds: record.int64BigEndian(at: 16)), packetType: packetType,
            direction: direction, adapterIndex: adapterIndex, packet: bytes)
    }

    /// Makes `count` bytes available from `start`; false if the file ends first. Inline: nearly every record
    /// is already in the buffer.
    @inline(__always)
    private func available(_ count: Int) throws(BTSnoopError) -> Bool {
        end - start >= count ? true : try refill(count)
    }

    /// Moves what is left to the front of the buffer and reads big chunks behind it until `count` bytes are
    /// there or the file ends.
    @inline(never)
    private func refill(_ count: Int) throws(BTSnoopError) -> Bool {
        if start > 0 {
            if end > start {
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            }
            end -= start
            start = 0
        }
        while end < count, !atEndOfFile {
            let got = read(descriptor, buffer.baseAddress! + end, buffer.count - end)
            if got > 0 {
                end += got
            } else if got == 0 {
                atEndOfFile = true
            } else if errno != EINTR {
                throw BTSnoopError(.readFailed(errno: errno), offset: fileOffset + end)
            }
        }
        return end >= count
    }

    private func consume(_ count: Int) {
        start += count
        fileOffset += count
    }
}

/// BlueZ monitor opcodes (src/shared/btsnoop.h) that carry HCI packets.
enum MonitorOpcode {
    static func packet(_ opcode: UInt16) -> (HCIPacketType, HCIDirection)? {
        switch opcode {
        case 2: (.command, .hostToController)
        case 3: (.event, .controllerToHost)
        case 4: (.acl, .hostToController)
        case 5: (.acl, .controllerToHost)
        case 6: (.sco, .hostToController)
        case 7: (.sco, .controllerToHost)
        case 18: (.iso, .hostToController)
        case 19: (.iso, .controllerToHost)
        default: nil
        }
    }

    static func opcode(_ type: HCIPacketType, _ direction: HCIDirection) -> UInt16 {
        let sent = direction == .hostToController
        return switch type {
        case .command: 2
        case .event: 3
        case .acl: sent ? 4 : 5
        case .sco: sent ? 6 : 7
        case .iso: sent ? 18 : 19
        }
    }
}
