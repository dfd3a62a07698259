/// Which HCI event carried an advertising report.
public enum AdvertisingReportFormat: String, Hashable, Sendable {
    /// LE Advertising Report, LE Meta subevent 0x02: legacy advertising PDUs only.
    case legacy
    /// LE Extended Advertising Report, LE Meta subevent 0x0D: legacy or extended advertising PDUs.
    case extended
}

/// The fields only an LE Extended Advertising Report carries. Legacy reports get the values the spec uses for
/// "none": LE 1M primary PHY, no secondary PHY, no ADI, tx power not available.
public struct ExtendedAdvertisingFields: Hashable, Sendable {
    public var primaryPHY: UInt8
    public var secondaryPHY: UInt8
    public var advertisingSID: UInt8
    /// dBm; 127 means not available.
    public var txPower: Int8
    /// In units of 1.25 ms; 0 means no periodic advertising.
    public var periodicAdvertisingInterval: UInt16
    public var directAddressType: UInt8
    public var directAddress: BluetoothAddress

    public init(
        primaryPHY: UInt8 = 0x01, secondaryPHY: UInt8 = 0x00, advertisingSID: UInt8 = 0xFF, txPower: Int8 = 127,
        periodicAdvertisingInterval: UInt16 = 0, directAddressType: UInt8 = 0,
        directAddress: BluetoothAddress = BluetoothAddress(wire: (0, 0, 0, 0, 0, 0))
    ) {
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.txPower = txPower
        self.periodicAdvertisingInterval = periodicAdvertisingInterval
        self.directAddressType = directAddressType
        self.directAddress = directAddress
    }
}

/// One report of an LE (Extended) Advertising Report event, borrowing the event's bytes: valid only as long as
/// the buffer that was parsed (for a capture, until the next record is read). Copy it out with
/// `AdvertisingReport(view)`.
///
/// The iterator checked the report's lengths; each field is read from the bytes when asked for, so a replay that
/// wants only the data, the address and the RSSI pays for nothing else.
public struct AdvertisingReportView {
    public let format: AdvertisingReportFormat
    /// The report's bytes, from its event type to its last field.
    private let fields: UnsafeRawBufferPointer
    /// The advertising or scan response data (AD structures).
    public let data: UnsafeRawBufferPointer
    /// Where `data` starts in the packet that was parsed, for error offsets.
    public let dataOffset: Int

    /// `fields` holds at least the fixed fields of `format` (10 bytes legacy, 24 extended) and `data`.
    fileprivate init(
        format: AdvertisingReportFormat, fields: UnsafeRawBufferPointer, data: UnsafeRawBufferPointer,
        dataOffset: Int
    ) {
        self.format = format
        self.fields = fields
        self.data = data
        self.dataOffset = dataOffset
    }

    // Legacy: event type, address type, address[6], data length, data, rssi.
    // Extended: event type (LE u16), address type, address[6], primary PHY, secondary PHY, SID, tx power, rssi,
    // periodic interval (LE u16), direct address type, direct address[6], data length, data.

    /// Legacy: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    /// Extended: bits 0 connectable, 1 scannable, 2 directed, 3 scan response, 4 legacy PDU, 5-6 data status.
    public var eventType: UInt16 {
        switch format {
        case .legacy: UInt16(fields[0])
        case .extended: fields.uint16LittleEndian(at: 0)
        }
    }

    /// 0 public, 1 random, 2 public identity, 3 random (static) identity, 0xFF anonymous.
    public var addressType: UInt8 { fields[format == .legacy ? 1 : 2] }

    @inline(__always)
    public var address: BluetoothAddress { fields.bluetoothAddress(at: format == .legacy ? 2 : 3) }

    /// dBm; 127 means not available.
    @inline(__always)
    public var rssi: Int8 { fields.int8(at: format == .legacy ? fields.count - 1 : 13) }

    public var extended: ExtendedAdvertisingFields {
        switch format {
        case .legacy: ExtendedAdvertisingFields()
        case .extended:
            ExtendedAdvertisingFields(
                primaryPHY: fields[9], secondaryPHY: fields[10], advertisingSID: fields[11],
                txPower: fields.int8(at: 12), periodicAdvertisingInterval: fields.uint16LittleEndian(at: 14),
                directAddressType: fields[16], directAddress: fields.bluetoothAddress(at: 17))
        }
    }

    /// Whether the advertiser sent a legacy PDU (always for the legacy event; bit 4 of the extended event type).
    public var isLegacyPDU: Bool { format == .legacy || eventType & 0x10 != 0 }
}

/// An advertising report that owns its data: what the encoder takes and what tests compare.
public struct AdvertisingReport: Hashable, Sendable {
    public var format: AdvertisingReportFormat
    public var eventType: UInt16
    public var addressType: UInt8
    public var address: BluetoothAddress
    public var rssi: Int8
    public var extended: ExtendedAdvertisingFields
    public var data: [UInt8]

    public init(
        format: AdvertisingReportFormat, eventType: UInt16, addressType: UInt8, address: BluetoothAddress, rssi: Int8,
        data: [UInt8], extended: ExtendedAdvertisingFields = ExtendedAdvertisingFields()
    ) {
        self.format = format
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.extended = extended
        self.data = data
    }

    public init(_ view: AdvertisingReportView) {
        self.init(
            format: view.format, eventType: view.eventType, addressType: view.addressType, address: view.address,
            rssi: view.rssi, data: Array(view.data), extended: view.extended)
    }

    public var isLegacyPDU: Bool { format == .legacy || eventType & 0x10 != 0 }
}

/// Reads the advertising reports of one HCI event without copying, one at a time, in order.
///
/// Reports are laid out one after the other, each with all its fields (Core spec Vol 4, Part E, 5.2 "arrayed
/// parameters": A[0], B[0], A[1], B[1], ...), which is what controllers send and what Linux and Wireshark read.
/// Events other than LE Advertising Report (0x3E/0x02) and LE Extended Advertising Report (0x3E/0x0D) have no
/// reports. A report whose fields run past the end throws; the reports before it were already returned.
/// Bytes after the last report are ignored.
public struct AdvertisingReportIterator {
    private let event: UnsafeRawBufferPointer
    private let baseOffset: Int
    private var cursor = 4
    /// Reports not read yet.
    public private(set) var remaining = 0
    /// Nil for events that are not advertising reports.
    public let format: AdvertisingReportFormat?

    /// No event: no reports.
    init() {
        event = UnsafeRawBufferPointer(start: nil, count: 0)
        baseOffset = 0
        format = nil
    }

    /// `event` is a bare HCI event: event code, parameter length, parameters. The parameter length must match
    /// the bytes given. `baseOffset` is added to error offsets.
    @inline(__always)
    public init(event: UnsafeRawBufferPointer, baseOffset: Int = 0) throws(MalformedPacket) {
        self.event = event
        self.baseOffset = baseOffset
        guard event.count >= 2 else {
            throw MalformedPacket(event.isEmpty ? .empty : .truncated, offset: baseOffset + event.count)
        }
        let declared = Int(event[1])
        guard declared == event.count - 2 else {
            throw MalformedPacket(
                .parameterLengthMismatch(declared: declared, actual: event.count - 2), offset: baseOffset + 1)
        }
        guard event[0] == HCIEvent.leMetaEventCode, event.count >= 3 else {
            format = nil
            return
        }
        switch event[2] {
        case HCIEvent.leAdvertisingReportSubevent: format = .legacy
        case HCIEvent.leExtendedAdvertisingReportSubevent: format = .extended
        default:
            format = nil
            return
        }
        guard event.count >= 4 else { throw MalformedPacket(.truncated, offset: baseOffset + 3) }
        remaining = Int(event[3])
    }

    /// `packet` is an HCI event with H4 framing (a leading 0x04) or without. A first byte of 0x04 means H4: event
    /// code 0x04 (Connection Request) has no advertising reports.
    public init(packet: UnsafeRawBufferPointer) throws(MalformedPacket) {
        guard let first = packet.first else { throw MalformedPacket(.empty, offset: 0) }
        if first == HCIPacketType.event.rawValue {
            try self.init(event: packet.slice(1, count: packet.count - 1), baseOffset: 1)
        } else {
            try self.init(event: packet)
        }
    }

    @inline(__always)
    public mutating func next() throws(MalformedPacket) -> AdvertisingReportView? {
        guard remaining > 0, let format else { return nil }
        remaining -= 1
        let start = cursor
        // The fixed fields around the data, and where the data length is among them. The cursor never passes
        // the end of the event, so these sums (a few hundred bytes past it at most) cannot overflow.
        let (fixedLength, lengthField) = format == .legacy ? (10, 8) : (24, 23)
        guard start &+ lengthField < event.count else { throw truncated(at: start) }
        let length = Int(event[start &+ lengthField])
        let end = start &+ fixedLength &+ length
        guard end <= event.count else { throw truncated(at: start &+ lengthField) }
        cursor = end
        let dataStart = start &+ lengthField &+ 1
        return AdvertisingReportView(
            format: format, fields: event.slice(start, count: fixedLength + length),
            data: event.slice(dataStart, count: length), dataOffset: baseOffset + dataStart)
    }

    private mutating func truncated(at offset: Int) -> MalformedPacket {
        remaining = 0
        return MalformedPacket(.truncated, offset: baseOffset + offset)
    }
}

/// HCI event numbers, and reading and writing the advertising report events.
public enum HCIEvent {
    public static let leMetaEventCode: UInt8 = 0x3E
    public static let leAdvertisingReportSubevent: UInt8 = 0x02
    public static let leExtendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Every advertising report of one HCI event (H4-framed or bare), copied out. Other events give none.
    public static func advertisingReports(inPacket packet: [UInt8]) throws(MalformedPacket) -> [AdvertisingReport] {
        try packet.withBytes { bytes throws(MalformedPacket) in
            var reports = try AdvertisingReportIterator(packet: bytes)
            var copies: [AdvertisingReport] = []
            while let report = try reports.next() { copies.append(AdvertisingReport(report)) }
            return copies
        }
    }

    /// Appends a bare LE Advertising Report event (code, length, parameters) holding `reports`, in the legacy
    /// layout whatever each report's `format` says.
    public static func appendLEAdvertisingReport(_ reports: [AdvertisingReport], to bytes: inout [UInt8])
        throws(EncodingError)
    {
        for report in reports where report.eventType > 0xFF {
            throw EncodingError(field: "legacy event type", length: Int(report.eventType), maximum: 0xFF)
        }
        try checkSizes(reports, maximumCount: 0x19, bytesPerReport: 10)
        let start = beginReportEvent(subevent: leAdvertisingReportSubevent, count: reports.count, to: &bytes)
        for report in reports {
            bytes.append(UInt8(report.eventType))
            bytes.append(report.addressType)
            bytes.append(report.address)
            bytes.append(UInt8(report.data.count))
            bytes.append(contentsOf: report.data)
            bytes.append(UInt8(bitPattern: report.rssi))
        }
        bytes[start + 1] = UInt8(bytes.count - start - 2)
    }

    /// Appends a bare LE Extended Advertising Report event holding `reports`, in the extended layout.
    public static func appendLEExtendedAdvertisingReport(
        _ reports: [AdvertisingReport], to bytes: inout [UInt8]
    ) throws(EncodingError) {
        try checkSizes(reports, maximumCount: 0x0A, bytesPerReport: 24)
        let start = beginReportEvent(subevent: leExtendedAdvertisingReportSubevent, count: reports.count, to: &bytes)
        for report in reports {
            let extended = report.extended
            bytes.appendLittleEndian(report.eventType)
            bytes.append(report.addressType)
            bytes.append(report.address)
            bytes.append(extended.primaryPHY)
            bytes.append(extended.secondaryPHY)
            bytes.append(extended.advertisingSID)
            bytes.append(UInt8(bitPattern: extended.txPower))
            bytes.append(UInt8(bitPattern: report.rssi))
            bytes.appendLittleEndian(extended.periodicAdvertisingInterval)
            bytes.append(extended.directAddressType)
            bytes.append(extended.directAddress)
            bytes.append(UInt8(report.data.count))
            bytes.append(contentsOf: report.data)
        }
        bytes[start + 1] = UInt8(bytes.count - start - 2)
    }

    /// Appends a bare event holding `reports` in the layout of `format`.
    public static func append(
        _ reports: [AdvertisingReport], format: AdvertisingReportFormat, to bytes: inout [UInt8]
    ) throws(EncodingError) {
        switch format {
        case .legacy: try appendLEAdvertisingReport(reports, to: &bytes)
        case .extended: try appendLEExtendedAdvertisingReport(reports, to: &bytes)
        }
    }

    /// A bare event holding `reports` in the layout of `format`.
    public static func advertisingReportEvent(
        _ reports: [AdvertisingReport], format: AdvertisingReportFormat
    ) throws(EncodingError) -> [UInt8] {
        var bytes: [UInt8] = []
        try append(reports, format: format, to: &bytes)
        return bytes
    }

    /// Checks what the one-byte length fields can hold, before anything is written.
    private static func checkSizes(
        _ reports: [AdvertisingReport], maximumCount: Int, bytesPerReport: Int
    ) throws(EncodingError) {
        guard (1...maximumCount).contains(reports.count) else {
            throw EncodingError(field: "number of reports", length: reports.count, maximum: maximumCount)
        }
        var parameters = 2
        for report in reports {
            guard report.data.count <= 0xFF else {
                throw EncodingError(field: "advertising data", length: report.data.count, maximum: 0xFF)
            }
            parameters += bytesPerReport + report.data.count
        }
        guard parameters <= 0xFF else {
            throw EncodingError(field: "event parameters", length: parameters, maximum: 0xFF)
        }
    }

    private static func beginReportEvent(subevent: UInt8, count: Int, to bytes: inout [UInt8]) -> Int {
        let start = bytes.count
        bytes.append(leMetaEventCode)
        bytes.append(0)  // parameter length, set once the reports are written
        bytes.append(subevent)
        bytes.append(UInt8(count))
        return start
    }
}
