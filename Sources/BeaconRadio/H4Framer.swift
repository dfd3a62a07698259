/// Cuts an H4 byte stream (Bluetooth Core, Vol 4, Part A) into packets: each starts with its
/// indicator byte, then a header whose length field says how many bytes follow. Reads may split a
/// packet or carry several; the framer keeps what is incomplete for the next read. An unknown indicator
/// means the framing is lost: nothing after it can be trusted.
public struct H4Framer: Sendable {
    public struct Packet: Hashable, Sendable {
        /// The H4 packet indicator (0x04: event).
        public var indicator: UInt8
        /// The packet without its indicator (an event: code, length, parameters).
        public var bytes: [UInt8]
    }

    public static let eventIndicator: UInt8 = 0x04

    private var pending: [UInt8] = []
    /// Where the unread bytes of `pending` start (compacted when a read is consumed).
    private var start = 0
    /// Set once an unknown indicator was seen; the stream cannot be read any further.
    private var lostIndicator: UInt8?
    /// The transport's text, for the error.
    private let source: String

    public init(source: String) { self.source = source }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0, start == pending.count {
            pending.removeAll(keepingCapacity: true)
            start = 0
        }
        pending.append(contentsOf: bytes)
    }

    /// The next complete packet, or nil when more bytes are needed. Throws `.framingLost` at an unknown
    /// indicator, then at every later call.
    public mutating func next() throws(RadioError) -> Packet? {
        if let lostIndicator { throw .framingLost(source, indicator: lostIndicator) }
        guard start < pending.count else { return nil }
        let indicator = pending[start]
        // Header length and where its length field is (one byte, or two little-endian).
        let header: Int
        let lengthOffset: Int
        let lengthBytes: Int
        switch indicator {
        case 0x01: (header, lengthOffset, lengthBytes) = (3, 2, 1)  // command
        case 0x02: (header, lengthOffset, lengthBytes) = (4, 2, 2)  // ACL data
        case 0x03: (header, lengthOffset, lengthBytes) = (3, 2, 1)  // synchronous data
        case 0x04: (header, lengthOffset, lengthBytes) = (2, 1, 1)  // event
        case 0x05: (header, lengthOffset, lengthBytes) = (4, 2, 2)  // ISO data
        default:
            lostIndicator = indicator
            throw .framingLost(source, indicator: indicator)
        }
        let body = start + 1
        guard pending.count - body >= header else { return nil }
        var length = Int(pending[body + lengthOffset])
        if lengthBytes == 2 { length |= Int(pending[body + lengthOffset + 1]) << 8 }
        // ISO's length field has 14 bits; the top two are reserved.
        if indicator == 0x05 { length &= 0x3FFF }
        let end = body + header + length
        guard pending.count >= end else { return nil }
        let packet = Packet(indicator: indicator, bytes: Array(pending[body..<end]))
        start = end
        return packet
    }
}
