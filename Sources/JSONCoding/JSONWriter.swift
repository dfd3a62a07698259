import Foundation

// The byte-level half of the table-driven JSON writer: literals, numbers, UUIDs, dates and escaped
// strings, written as `LoyaltyJSON.encoder()` writes them. `JSONTable` drives it field by field for the
// wire types with tables (the catalog page, the requests shoppers and tills send most); `JSONValue` for lines
// such as the server log's and the `--json` output.

package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func array<Element, Failure: Error>(
        _ elements: [Element], _ element: (inout JSONWriter, Element) throws(Failure) -> Void
    ) throws(Failure) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try element(&self, value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":`, after a comma when `separated`.
    package mutating func key(_ key: StaticString, separated: Bool) {
        if separated { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        raw("\":")
    }

    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    package mutating func date(_ date: Date) {
        bytes.append(UInt8(ascii: "\""))
        LoyaltyJSON.appendTimestamp(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    package mutating func integer(_ value: Int) {
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
    package mutating func double(_ value: Double) throws(JSONCodingError) {
        guard value.isFinite else {
            throw JSONCodingError(offset: 0, message: "\(value) is not a JSON number")
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    package mutating func uuid(_ uuid: UUID) {
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

    package mutating func string(_ text: String) {
        JSONLineBuffer.appendString(text, to: &bytes)
    }
}
