import Foundation

// The hand-written JSON coder is driven by one table per type (LoyaltyAPI's CatalogPageJSON, ShopperAndTillJSON): each field's key, whether it must be
// there, and how to get and set it. The writer walks the table in key order (the order `JSONEncoder`'s
// `.sortedKeys` writes), leaving out absent optionals; the reader matches each key against the table,
// skips unknown keys and reads null as absent. A field is described once, for both directions.

/// A value the table-driven coder writes and reads.
package protocol JSONTableValue: Sendable {
    func writeJSON(_ writer: inout JSONWriter) throws(JSONCodingError)
    static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> Self
}

/// A JSON object described by a table of its fields.
package protocol JSONTableObject: JSONTableValue {
    /// The object's name in error messages, e.g. "offer".
    static var jsonName: String { get }
    /// What reading starts from; every required field overwrites its part.
    static var jsonBlank: Self { get }
    /// The fields in the byte order of their keys; at most 64.
    static var jsonFields: [JSONTableField<Self>] { get }
}

/// One field of a `JSONTableObject`.
package struct JSONTableField<Object>: Sendable {
    package let key: StaticString
    package let required: Bool
    /// Writes `"key":value`, preceded by a comma when `separated`, unless the value is absent; whether it wrote.
    let write: @Sendable (inout JSONWriter, Object, _ separated: Bool) throws(JSONCodingError) -> Bool
    /// Reads the value the reader is placed at into the object.
    package let read: @Sendable (inout JSONReader, inout Object) throws(JSONCodingError) -> Void

    /// A field that is always there.
    package static func required<Value: JSONTableValue>(
        _ key: StaticString, _ get: @escaping @Sendable (Object) -> Value,
        _ set: @escaping @Sendable (inout Object, Value) -> Void
    ) -> Self {
        Self(
            key: key, required: true,
            write: { writer, object, separated throws(JSONCodingError) in
                writer.key(key, separated: separated)
                try get(object).writeJSON(&writer)
                return true
            },
            read: { reader, object throws(JSONCodingError) in set(&object, try Value.readJSON(&reader)) })
    }

    /// A field left out when nil, and read as nil when null or missing.
    package static func optional<Value: JSONTableValue>(
        _ key: StaticString, _ get: @escaping @Sendable (Object) -> Value?,
        _ set: @escaping @Sendable (inout Object, Value?) -> Void
    ) -> Self {
        Self(
            key: key, required: false,
            write: { writer, object, separated throws(JSONCodingError) in
                guard let value = get(object) else { return false }
                writer.key(key, separated: separated)
                try value.writeJSON(&writer)
                return true
            },
            read: { reader, object throws(JSONCodingError) in
                set(&object, try reader.null() ? nil : try Value.readJSON(&reader))
            })
    }

    /// An array that is always there.
    package static func array<Element: JSONTableValue>(
        _ key: StaticString, _ get: @escaping @Sendable (Object) -> [Element],
        _ set: @escaping @Sendable (inout Object, [Element]) -> Void
    ) -> Self {
        Self(
            key: key, required: true,
            write: { writer, object, separated throws(JSONCodingError) in
                writer.key(key, separated: separated)
                try writer.array(get(object)) { writer, element throws(JSONCodingError) in
                    try element.writeJSON(&writer)
                }
                return true
            },
            read: { reader, object throws(JSONCodingError) in
                set(
                    &object,
                    try reader.array(key.description) { reader throws(JSONCodingError) in
                        try Element.readJSON(&reader)
                    })
            })
    }
}

extension JSONTableObject {
    package func writeJSON(_ writer: inout JSONWriter) throws(JSONCodingError) {
        writer.bytes.append(UInt8(ascii: "{"))
        var separated = false
        for field in Self.jsonFields {
            if try field.write(&writer, self, separated) { separated = true }
        }
        writer.bytes.append(UInt8(ascii: "}"))
    }

    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> Self {
        let fields = jsonFields
        var object = jsonBlank
        var found: UInt64 = 0
        // Keys usually come in the table's order (every encoder here sorts them): the next field is tried first.
        var next = 0
        try reader.object(jsonName) { reader, key throws(JSONCodingError) in
            let index =
                next < fields.count && key.is(fields[next].key) ? next : fields.firstIndex { key.is($0.key) }
            guard let index else { return try reader.skipValue() }
            try fields[index].read(&reader, &object)
            found |= 1 << index
            next = index + 1
        }
        for (index, field) in fields.enumerated() where field.required && found & 1 << index == 0 {
            throw reader.missing(field.key, in: jsonName)
        }
        return object
    }
}

extension String: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { writer.string(self) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> String { try reader.string() }
}

extension Bool: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { self ? writer.raw("true") : writer.raw("false") }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> Bool { try reader.bool() }
}

extension Int: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { writer.integer(self) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> Int { try reader.integer() }
}

extension UInt16: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { writer.integer(Int(self)) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> UInt16 {
        guard let value = UInt16(exactly: try reader.integer()) else {
            throw reader.failure("expected a whole number from 0 to 65535")
        }
        return value
    }
}

extension Double: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) throws(JSONCodingError) { try writer.double(self) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> Double { try reader.double() }
}

extension UUID: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { writer.uuid(self) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> UUID { try reader.uuid() }
}

extension Date: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { writer.date(self) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> Date { try reader.date() }
}
