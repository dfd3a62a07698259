import Foundation

// A hand-written JSON coder for the catalog page alone: a full catalog is hundreds of thousands of offers,
// and Foundation's coders spend most of a sync on key dictionaries and number boxing. It writes the bytes
// `LoyaltyJSON.encoder()` writes (sorted keys, absent optionals left out, upper-case UUIDs) and reads what
// `LoyaltyJSON.decoder()` reads (unknown keys ignored, null as absent), with the same field names as the
// types' `CodingKeys`.

/// Why a catalog page's JSON could not be read or written.
public struct CatalogPageJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The byte offset in the input where reading stopped (0 when writing).
    public var offset: Int
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "at byte \(offset): \(message)" }
}

extension CatalogPage {
    /// Reads a page as `LoyaltyJSON.decoder()` would, without Foundation's decoder.
    public init(json: [UInt8]) throws(CatalogPageJSONError) {
        let result: Result<CatalogPage, CatalogPageJSONError> = json.withUnsafeBufferPointer { bytes in
            var reader = JSONReader(bytes)
            do throws(CatalogPageJSONError) {
                let page = try reader.catalogPage()
                try reader.end()
                return .success(page)
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// The bytes `LoyaltyJSON.encoder()` writes for the page; fails only on a non-finite coordinate.
    public func json() throws(CatalogPageJSONError) -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(256 + offers.count * 400 + stores.count * 250 + retailers.count * 120)
        try writer.write(self)
        return writer.bytes
    }
}

// MARK: - Writing

extension LoyaltyJSON {
    /// `text` as a JSON string literal, escaped as `JSONEncoder` escapes it: for lines written by hand on
    /// paths too hot for an encoder, such as the server's per-request log line.
    public static func quoted(_ text: String) -> String {
        var writer = JSONWriter()
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

private struct JSONWriter {
    var bytes: [UInt8] = []

    mutating func write(_ page: CatalogPage) throws(CatalogPageJSONError) {
        raw("{\"cursor\":")
        string(page.cursor)
        raw(",\"full\":")
        raw(page.full ? "true" : "false")
        raw(",\"more\":")
        raw(page.more ? "true" : "false")
        raw(",\"offers\":")
        array(page.offers) { $0.write($1) }
        raw(",\"removed\":")
        array(page.removed) { $0.write($1) }
        raw(",\"removed_stores\":")
        array(page.removedStores) { $0.write($1) }
        raw(",\"retailers\":")
        array(page.retailers) { $0.write($1) }
        raw(",\"server_time\":")
        date(page.serverTime)
        raw(",\"stores\":[")
        for (index, store) in page.stores.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try write(store)
        }
        raw("]}")
    }

    mutating func write(_ offer: Offer) {
        bytes.append(UInt8(ascii: "{"))
        if let category = offer.category {
            raw("\"category\":")
            string(category)
            bytes.append(UInt8(ascii: ","))
        }
        if let description = offer.description {
            raw("\"description\":")
            string(description)
            bytes.append(UInt8(ascii: ","))
        }
        if let endsAt = offer.endsAt {
            raw("\"ends_at\":")
            date(endsAt)
            bytes.append(UInt8(ascii: ","))
        }
        raw("\"id\":")
        uuid(offer.id)
        if let imageURL = offer.imageURL {
            raw(",\"image_url\":")
            string(imageURL)
        }
        raw(",\"major\":")
        integer(Int(offer.major))
        raw(",\"minor\":")
        integer(Int(offer.minor))
        raw(",\"per_shopper_limit\":")
        integer(offer.perShopperLimit)
        if let reshowAfterSeconds = offer.reshowAfterSeconds {
            raw(",\"reshow_after_s\":")
            integer(reshowAfterSeconds)
        }
        raw(",\"retailer_id\":")
        uuid(offer.retailerID)
        if let startsAt = offer.startsAt {
            raw(",\"starts_at\":")
            date(startsAt)
        }
        raw(",\"title\":")
        string(offer.title)
        if let totalLimit = offer.totalLimit {
            raw(",\"total_limit\":")
            integer(totalLimit)
        }
        raw(",\"updated_at\":")
        date(offer.updatedAt)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func write(_ tombstone: CatalogTombstone) {
        raw("{\"id\":")
        uuid(tombstone.id)
        raw(",\"retailer_id\":")
        uuid(tombstone.retailerID)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func write(_ retailer: CatalogRetailer) {
        raw("{\"id\":")
        uuid(retailer.id)
        raw(",\"name\":")
        string(retailer.name)
        raw(",\"uuid\":")
        uuid(retailer.uuid)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func write(_ store: RetailStore) throws(CatalogPageJSONError) {
        raw("{\"id\":")
        uuid(store.id)
        raw(",\"latitude\":")
        try double(store.latitude)
        raw(",\"longitude\":")
        try double(store.longitude)
        raw(",\"name\":")
        string(store.name)
        raw(",\"radius_m\":")
        integer(store.radiusMetres)
        raw(",\"retailer_id\":")
        uuid(store.retailerID)
        raw(",\"store_id\":")
        string(store.storeID)
        raw(",\"updated_at\":")
        date(store.updatedAt)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func array<Element>(_ elements: [Element], _ element: (inout JSONWriter, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            element(&self, value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func date(_ date: Date) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: LoyaltyJSON.formatTimestamp(date).utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }

    /// As Foundation writes a Double: its shortest round-tripping description, without a trailing ".0".
    mutating func double(_ value: Double) throws(CatalogPageJSONError) {
        guard value.isFinite else {
            throw CatalogPageJSONError(offset: 0, message: "\(value) is not a JSON number")
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    mutating func uuid(_ uuid: UUID) {
        let hexits: StaticString = "0123456789ABCDEF"
        bytes.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { octets in
            hexits.withUTF8Buffer { hexits in
                for (index, octet) in octets.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                    bytes.append(hexits[Int(octet >> 4)])
                    bytes.append(hexits[Int(octet & 0xF)])
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case ..<0x20:
                let hexits: StaticString = "0123456789abcdef"
                raw("\\u00")
                hexits.withUTF8Buffer {
                    bytes.append($0[Int(byte >> 4)])
                    bytes.append($0[Int(byte & 0xF)])
                }
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

// MARK: - Reading

private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Nesting of skipped values, bounded so hostile input cannot exhaust the stack.
    var depth = 0
    static let maximumDepth = 256

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func failure(_ message: String) -> CatalogPageJSONError {
        CatalogPageJSONError(offset: index, message: message)
    }

    func missing(_ key: StaticString, in object: String) -> CatalogPageJSONError {
        failure("the \(object) has no \"\(key)\"")
    }

    mutating func end() throws(CatalogPageJSONError) {
        skipWhitespace()
        guard index == bytes.count else { throw failure("text after the JSON value") }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The next non-space byte, not consumed.
    mutating func peek() throws(CatalogPageJSONError) -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw failure("unexpected end of the text") }
        return bytes[index]
    }

    mutating func expect(_ byte: UInt8) throws(CatalogPageJSONError) {
        guard try peek() == byte else {
            throw failure("expected '\(Character(Unicode.Scalar(byte)))'")
        }
        index += 1
    }

    /// Calls `field` with each key of an object, the reader placed at its value; `field` reads or skips it.
    mutating func object(
        _ what: String, _ field: (inout JSONReader, ObjectKey) throws(CatalogPageJSONError) -> Void
    ) throws(CatalogPageJSONError) {
        guard try peek() == UInt8(ascii: "{") else { throw failure("the \(what) is not an object") }
        index += 1
        if try peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a key in the \(what)") }
            let key = try objectKey()
            try expect(UInt8(ascii: ":"))
            try field(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw failure("expected ',' or '}' in the \(what)")
            }
        }
    }

    mutating func array<Element>(
        _ what: String, _ element: (inout JSONReader) throws(CatalogPageJSONError) -> Element
    ) throws(CatalogPageJSONError) -> [Element] {
        guard try peek() == UInt8(ascii: "[") else { throw failure("\(what) is not an array") }
        index += 1
        var elements: [Element] = []
        if try peek() == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try element(&self))
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return elements
            default: throw failure("expected ',' or ']' in \(what)")
            }
        }
    }

    /// A key: the raw bytes when it has no escapes (the usual case), else its decoded text.
    struct ObjectKey {
        var raw: UnsafeBufferPointer<UInt8>
        var decoded: String?

        func `is`(_ name: StaticString) -> Bool {
            if let decoded { return decoded == name.description }
            return name.withUTF8Buffer { name in
                name.count == raw.count && memcmp(name.baseAddress!, raw.baseAddress!, raw.count) == 0
            }
        }
    }

    mutating func objectKey() throws(CatalogPageJSONError) -> ObjectKey {
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
            bytes[end] >= 0x20, bytes[end] < 0x80
        {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return ObjectKey(raw: UnsafeBufferPointer(rebasing: bytes[start..<end]), decoded: nil)
        }
        let decoded = try string()
        return ObjectKey(raw: UnsafeBufferPointer(rebasing: bytes[start..<start]), decoded: decoded)
    }

    /// Whether the value is `null` (consumed), for optional fields.
    mutating func null() throws(CatalogPageJSONError) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func literal(_ word: StaticString) throws(CatalogPageJSONError) {
        let matches = word.withUTF8Buffer { word in
            index + word.count <= bytes.count
                && memcmp(word.baseAddress!, bytes.baseAddress! + index, word.count) == 0
        }
        guard matches else { throw failure("expected \(word)") }
        index += word.utf8CodeUnitCount
    }

    mutating func bool() throws(CatalogPageJSONError) -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw failure("expected true or false")
        }
    }

    mutating func string() throws(CatalogPageJSONError) -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a string") }
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                guard let text else { throw failure("the string is not UTF-8") }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            index += 1
        }
        // With escapes: unescaped into a copy.
        var text = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: text, as: UTF8.self) else {
                    throw failure("the string is not UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hexQuad()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure("a high surrogate without its low surrogate") }
                        index += 2
                        let low = try hexQuad()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw failure("a high surrogate without its low surrogate")
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw failure("a low surrogate without its high surrogate")
                    }
                    // Surrogates are excluded above, so the scalar exists.
                    text.append(contentsOf: Unicode.Scalar(scalar)!.utf8)
                default: throw failure("an unknown escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                text.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    mutating func hexQuad() throws(CatalogPageJSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit = Self.hexValue(bytes[index])
            guard digit < 16 else { throw failure("a \\u escape with a non-hex digit") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// 0...15 for a hex digit in either case, 255 for anything else.
    static func hexValue(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: 255
        }
    }

    /// A UUID string in either case, as `UUID(uuidString:)` reads it; the 36 bytes are read in place.
    mutating func uuid() throws(CatalogPageJSONError) -> UUID {
        guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a UUID string") }
        if index + 37 < bytes.count, bytes[index + 37] == UInt8(ascii: "\""),
            let uuid = Self.uuid(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<(index + 37)]))
        {
            index += 38
            return uuid
        }
        let start = index
        let text = try string()
        let utf8 = Array(text.utf8)
        guard let uuid = utf8.withUnsafeBufferPointer({ Self.uuid($0) })
        else {
            index = start
            throw failure("expected a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        }
        return uuid
    }

    /// 8-4-4-4-12 hex digits.
    static func uuid(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36, text[8] == UInt8(ascii: "-"), text[13] == UInt8(ascii: "-"),
            text[18] == UInt8(ascii: "-"), text[23] == UInt8(ascii: "-")
        else { return nil }
        var octets: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &octets) { octets in
            var position = 0
            for octet in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                let high = hexValue(text[position])
                let low = hexValue(text[position + 1])
                guard high | low < 16 else { return false }
                octets[octet] = high << 4 | low
                position += 2
            }
            return true
        }
        return valid ? UUID(uuid: octets) : nil
    }

    mutating func date() throws(CatalogPageJSONError) -> Date {
        let start = index
        guard let date = LoyaltyJSON.parseTimestamp(try string()) else {
            index = start
            throw failure("expected an ISO 8601 date-time such as 2026-01-31T09:00:00Z")
        }
        return date
    }

    /// The bytes of a number, checked against JSON's grammar.
    mutating func number() throws(CatalogPageJSONError) -> (text: UnsafeBufferPointer<UInt8>, integral: Bool) {
        _ = try peek()
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let leading = index
        guard digits() > 0, bytes[leading] != UInt8(ascii: "0") || index == leading + 1 else {
            index = start
            throw failure("expected a number")
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            integral = false
            guard digits() > 0 else { throw failure("a number without digits after '.'") }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            integral = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw failure("a number without exponent digits") }
        }
        return (UnsafeBufferPointer(rebasing: bytes[start..<index]), integral)
    }

    mutating func integer() throws(CatalogPageJSONError) -> Int {
        let start = index
        let (text, integral) = try number()
        if integral {
            var value = 0
            let negative = text[0] == UInt8(ascii: "-")
            for byte in text.dropFirst(negative ? 1 : 0) {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = product.addingReportingOverflow(
                    negative ? -Int(byte - UInt8(ascii: "0")) : Int(byte - UInt8(ascii: "0")))
                guard !overflow, !carry else {
                    index = start
                    throw failure("the number does not fit an integer")
                }
                value = sum
            }
            return value
        }
        // Foundation reads 1.0 or 1e2 as an integer when it is one exactly.
        guard let double = Double(String(decoding: text, as: UTF8.self)), let value = Int(exactly: double) else {
            index = start
            throw failure("expected an integer")
        }
        return value
    }

    mutating func double() throws(CatalogPageJSONError) -> Double {
        let start = index
        let (text, _) = try number()
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
            index = start
            throw failure("the number does not fit a Double")
        }
        return value
    }

    /// Reads and drops any value (an unknown key's).
    mutating func skipValue() throws(CatalogPageJSONError) {
        switch try peek() {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
            if bytes[index] == UInt8(ascii: "{") {
                try object("value") { reader, _ throws(CatalogPageJSONError) in try reader.skipValue() }
            } else {
                _ = try array("the value") { reader throws(CatalogPageJSONError) in try reader.skipValue() }
            }
        default: _ = try number()
        }
    }

    // MARK: The page's types

    mutating func catalogPage() throws(CatalogPageJSONError) -> CatalogPage {
        var cursor: String?
        var full: Bool?
        var more: Bool?
        var serverTime: Date?
        var retailers: [CatalogRetailer]?
        var offers: [Offer]?
        var removed: [CatalogTombstone]?
        var stores: [RetailStore]?
        var removedStores: [CatalogTombstone]?
        try object("page") { reader, key throws(CatalogPageJSONError) in
            if key.is("offers") {
                offers = try reader.array("offers") { reader throws(CatalogPageJSONError) in try reader.offer() }
            } else if key.is("cursor") {
                cursor = try reader.string()
            } else if key.is("full") {
                full = try reader.bool()
            } else if key.is("more") {
                more = try reader.bool()
            } else if key.is("server_time") {
                serverTime = try reader.date()
            } else if key.is("retailers") {
                retailers = try reader.array("retailers") { reader throws(CatalogPageJSONError) in
                    try reader.retailer()
                }
            } else if key.is("removed") {
                removed = try reader.array("removed") { reader throws(CatalogPageJSONError) in
                    try reader.tombstone()
                }
            } else if key.is("stores") {
                stores = try reader.array("stores") { reader throws(CatalogPageJSONError) in try reader.store() }
            } else if key.is("removed_stores") {
                removedStores = try reader.array("removed_stores") { reader throws(CatalogPageJSONError) in
                    try reader.tombstone()
                }
            } else {
                try reader.skipValue()
            }
        }
        guard let cursor else { throw missing("cursor", in: "page") }
        guard let full else { throw missing("full", in: "page") }
        guard let more else { throw missing("more", in: "page") }
        guard let serverTime else { throw missing("server_time", in: "page") }
        guard let retailers else { throw missing("retailers", in: "page") }
        guard let offers else { throw missing("offers", in: "page") }
        guard let removed else { throw missing("removed", in: "page") }
        guard let stores else { throw missing("stores", in: "page") }
        guard let removedStores else { throw missing("removed_stores", in: "page") }
        return CatalogPage(
            cursor: cursor, full: full, more: more, serverTime: serverTime, retailers: retailers, offers: offers,
            removed: removed, stores: stores, removedStores: removedStores)
    }

    mutating func offer() throws(CatalogPageJSONError) -> Offer {
        var id: UUID?
        var retailerID: UUID?
        var major: Int?
        var minor: Int?
        var title: String?
        var description: String?
        var category: String?
        var imageURL: String?
        var startsAt: Date?
        var endsAt: Date?
        var perShopperLimit: Int?
        var totalLimit: Int?
        var reshowAfterSeconds: Int?
        var updatedAt: Date?
        try object("offer") { reader, key throws(CatalogPageJSONError) in
            if key.is("id") {
                id = try reader.uuid()
            } else if key.is("retailer_id") {
                retailerID = try reader.uuid()
            } else if key.is("major") {
                major = try reader.integer()
            } else if key.is("minor") {
                minor = try reader.integer()
            } else if key.is("title") {
                title = try reader.string()
            } else if key.is("updated_at") {
                updatedAt = try reader.date()
            } else if key.is("per_shopper_limit") {
                perShopperLimit = try reader.integer()
            } else if key.is("description") {
                description = try reader.null() ? nil : try reader.string()
            } else if key.is("category") {
                category = try reader.null() ? nil : try reader.string()
            } else if key.is("image_url") {
                imageURL = try reader.null() ? nil : try reader.string()
            } else if key.is("starts_at") {
                startsAt = try reader.null() ? nil : try reader.date()
            } else if key.is("ends_at") {
                endsAt = try reader.null() ? nil : try reader.date()
            } else if key.is("total_limit") {
                totalLimit = try reader.null() ? nil : try reader.integer()
            } else if key.is("reshow_after_s") {
                reshowAfterSeconds = try reader.null() ? nil : try reader.integer()
            } else {
                try reader.skipValue()
            }
        }
        guard let id else { throw missing("id", in: "offer") }
        guard let retailerID else { throw missing("retailer_id", in: "offer") }
        guard let major else { throw missing("major", in: "offer") }
        guard let minor else { throw missing("minor", in: "offer") }
        guard let title else { throw missing("title", in: "offer") }
        guard let perShopperLimit else { throw missing("per_shopper_limit", in: "offer") }
        guard let updatedAt else { throw missing("updated_at", in: "offer") }
        guard let major = UInt16(exactly: major), let minor = UInt16(exactly: minor) else {
            throw failure("an offer's major or minor is not 0 to 65535")
        }
        return Offer(
            id: id, retailerID: retailerID, major: major, minor: minor, title: title, description: description,
            category: category, imageURL: imageURL, startsAt: startsAt, endsAt: endsAt,
            perShopperLimit: perShopperLimit, totalLimit: totalLimit, reshowAfterSeconds: reshowAfterSeconds,
            updatedAt: updatedAt)
    }

    mutating func retailer() throws(CatalogPageJSONError) -> CatalogRetailer {
        var id: UUID?
        var name: String?
        var uuid: UUID?
        try object("retailer") { reader, key throws(CatalogPageJSONError) in
            if key.is("id") {
                id = try reader.uuid()
            } else if key.is("name") {
                name = try reader.string()
            } else if key.is("uuid") {
                uuid = try reader.uuid()
            } else {
                try reader.skipValue()
            }
        }
        guard let id else { throw missing("id", in: "retailer") }
        guard let name else { throw missing("name", in: "retailer") }
        guard let uuid else { throw missing("uuid", in: "retailer") }
        return CatalogRetailer(id: id, name: name, uuid: uuid)
    }

    mutating func tombstone() throws(CatalogPageJSONError) -> CatalogTombstone {
        var id: UUID?
        var retailerID: UUID?
        try object("tombstone") { reader, key throws(CatalogPageJSONError) in
            if key.is("id") {
                id = try reader.uuid()
            } else if key.is("retailer_id") {
                retailerID = try reader.uuid()
            } else {
                try reader.skipValue()
            }
        }
        guard let id else { throw missing("id", in: "tombstone") }
        guard let retailerID else { throw missing("retailer_id", in: "tombstone") }
        return CatalogTombstone(id: id, retailerID: retailerID)
    }

    mutating func store() throws(CatalogPageJSONError) -> RetailStore {
        var id: UUID?
        var retailerID: UUID?
        var storeID: String?
        var name: String?
        var latitude: Double?
        var longitude: Double?
        var radiusMetres: Int?
        var updatedAt: Date?
        try object("store") { reader, key throws(CatalogPageJSONError) in
            if key.is("id") {
                id = try reader.uuid()
            } else if key.is("retailer_id") {
                retailerID = try reader.uuid()
            } else if key.is("store_id") {
                storeID = try reader.string()
            } else if key.is("name") {
                name = try reader.string()
            } else if key.is("latitude") {
                latitude = try reader.double()
            } else if key.is("longitude") {
                longitude = try reader.double()
            } else if key.is("radius_m") {
                radiusMetres = try reader.integer()
            } else if key.is("updated_at") {
                updatedAt = try reader.date()
            } else {
                try reader.skipValue()
            }
        }
        guard let id else { throw missing("id", in: "store") }
        guard let retailerID else { throw missing("retailer_id", in: "store") }
        guard let storeID else { throw missing("store_id", in: "store") }
        guard let name else { throw missing("name", in: "store") }
        guard let latitude else { throw missing("latitude", in: "store") }
        guard let longitude else { throw missing("longitude", in: "store") }
        guard let radiusMetres else { throw missing("radius_m", in: "store") }
        guard let updatedAt else { throw missing("updated_at", in: "store") }
        return RetailStore(
            id: id, retailerID: retailerID, storeID: storeID, name: name, latitude: latitude, longitude: longitude,
            radiusMetres: radiusMetres, updatedAt: updatedAt)
    }
}
