import Foundation

// The catalog page's JSON coder is driven by one table per type: each field's key, whether it must be
// there, and how to get and set it. The writer walks the table in key order (the order `JSONEncoder`'s
// `.sortedKeys` writes), leaving out absent optionals; the reader matches each key against the table,
// skips unknown keys and reads null as absent. A field is described once, for both directions.

/// A value the table-driven coder writes and reads.
protocol JSONTableValue: Sendable {
    func writeJSON(_ writer: inout JSONWriter) throws(CatalogPageJSONError)
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> Self
}

/// A JSON object described by a table of its fields.
protocol JSONTableObject: JSONTableValue {
    /// The object's name in error messages, e.g. "offer".
    static var jsonName: String { get }
    /// What reading starts from; every required field overwrites its part.
    static var jsonBlank: Self { get }
    /// The fields in the byte order of their keys; at most 64.
    static var jsonFields: [JSONTableField<Self>] { get }
}

/// What a table's `jsonBlank` holds where a required field will be read.
let zeroUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
let zeroDate = Date(timeIntervalSince1970: 0)

/// One field of a `JSONTableObject`.
struct JSONTableField<Object>: Sendable {
    let key: StaticString
    let required: Bool
    /// Writes `"key":value`, preceded by a comma when `separated`, unless the value is absent; whether it wrote.
    let write: @Sendable (inout JSONWriter, Object, _ separated: Bool) throws(CatalogPageJSONError) -> Bool
    /// Reads the value the reader is placed at into the object.
    let read: @Sendable (inout JSONReader, inout Object) throws(CatalogPageJSONError) -> Void

    /// A field that is always there.
    static func required<Value: JSONTableValue>(
        _ key: StaticString, _ get: @escaping @Sendable (Object) -> Value,
        _ set: @escaping @Sendable (inout Object, Value) -> Void
    ) -> Self {
        Self(
            key: key, required: true,
            write: { writer, object, separated throws(CatalogPageJSONError) in
                writer.key(key, separated: separated)
                try get(object).writeJSON(&writer)
                return true
            },
            read: { reader, object throws(CatalogPageJSONError) in set(&object, try Value.readJSON(&reader)) })
    }

    /// A field left out when nil, and read as nil when null or missing.
    static func optional<Value: JSONTableValue>(
        _ key: StaticString, _ get: @escaping @Sendable (Object) -> Value?,
        _ set: @escaping @Sendable (inout Object, Value?) -> Void
    ) -> Self {
        Self(
            key: key, required: false,
            write: { writer, object, separated throws(CatalogPageJSONError) in
                guard let value = get(object) else { return false }
                writer.key(key, separated: separated)
                try value.writeJSON(&writer)
                return true
            },
            read: { reader, object throws(CatalogPageJSONError) in
                set(&object, try reader.null() ? nil : try Value.readJSON(&reader))
            })
    }

    /// An array that is always there.
    static func array<Element: JSONTableValue>(
        _ key: StaticString, _ get: @escaping @Sendable (Object) -> [Element],
        _ set: @escaping @Sendable (inout Object, [Element]) -> Void
    ) -> Self {
        Self(
            key: key, required: true,
            write: { writer, object, separated throws(CatalogPageJSONError) in
                writer.key(key, separated: separated)
                try writer.array(get(object)) { writer, element throws(CatalogPageJSONError) in
                    try element.writeJSON(&writer)
                }
                return true
            },
            read: { reader, object throws(CatalogPageJSONError) in
                set(
                    &object,
                    try reader.array(key.description) { reader throws(CatalogPageJSONError) in
                        try Element.readJSON(&reader)
                    })
            })
    }
}

extension JSONTableObject {
    func writeJSON(_ writer: inout JSONWriter) throws(CatalogPageJSONError) {
        writer.bytes.append(UInt8(ascii: "{"))
        var separated = false
        for field in Self.jsonFields {
            if try field.write(&writer, self, separated) { separated = true }
        }
        writer.bytes.append(UInt8(ascii: "}"))
    }

    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> Self {
        let fields = jsonFields
        var object = jsonBlank
        var found: UInt64 = 0
        // Keys usually come in the table's order (every encoder here sorts them): the next field is tried first.
        var next = 0
        try reader.object(jsonName) { reader, key throws(CatalogPageJSONError) in
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
    func writeJSON(_ writer: inout JSONWriter) { writer.string(self) }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> String { try reader.string() }
}

extension Bool: JSONTableValue {
    func writeJSON(_ writer: inout JSONWriter) { self ? writer.raw("true") : writer.raw("false") }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> Bool { try reader.bool() }
}

extension Int: JSONTableValue {
    func writeJSON(_ writer: inout JSONWriter) { writer.integer(self) }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> Int { try reader.integer() }
}

extension UInt16: JSONTableValue {
    func writeJSON(_ writer: inout JSONWriter) { writer.integer(Int(self)) }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> UInt16 {
        guard let value = UInt16(exactly: try reader.integer()) else {
            throw reader.failure("expected a whole number from 0 to 65535")
        }
        return value
    }
}

extension Double: JSONTableValue {
    func writeJSON(_ writer: inout JSONWriter) throws(CatalogPageJSONError) { try writer.double(self) }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> Double { try reader.double() }
}

extension UUID: JSONTableValue {
    func writeJSON(_ writer: inout JSONWriter) { writer.uuid(self) }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> UUID { try reader.uuid() }
}

extension Date: JSONTableValue {
    func writeJSON(_ writer: inout JSONWriter) { writer.date(self) }
    static func readJSON(_ reader: inout JSONReader) throws(CatalogPageJSONError) -> Date { try reader.date() }
}
