/// A JSON value whose objects keep their keys in the order given, for lines people read first and programs
/// parse second: the server's log lines (`time`, `level`, `event` first), the `--json` lines (`"event"`
/// first). Written by `JSONWriter`: strings escaped as `JSONEncoder` escapes them; a number
/// JSON cannot hold (infinity, NaN) is written as null.
public enum JSONValue: Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    public var text: String { Self.text { write(to: &$0) } }

    /// The text of an object of the members of `groups` in order, those whose value is nil left out: what `.object`
    /// of them writes, without gathering them into one array first (the server writes a line per request).
    public static func objectText(_ groups: KeyValuePairs<String, JSONValue?>...) -> String {
        text { writer in
            writer.bytes.append(UInt8(ascii: "{"))
            var separated = false
            for group in groups {
                for case (let key, let value?) in group { writeMember(key, value, separated: &separated, to: &writer) }
            }
            writer.bytes.append(UInt8(ascii: "}"))
        }
    }

    private static func text(_ write: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        // A log line's size: the bytes are not copied over and again as they grow.
        writer.bytes.reserveCapacity(256)
        write(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `"key":value`, after a comma when a member came before it.
    private static func writeMember(
        _ key: String, _ value: JSONValue, separated: inout Bool, to writer: inout JSONWriter
    ) {
        if separated { writer.bytes.append(UInt8(ascii: ",")) }
        separated = true
        writer.string(key)
        writer.bytes.append(UInt8(ascii: ":"))
        value.write(to: &writer)
    }

    private func write(to writer: inout JSONWriter) {
        switch self {
        case .string(let text): writer.string(text)
        case .int(let number): writer.integer(number)
        case .double(let number):
            // Swift's shortest round-tripping text, "1.0" included, which JSON reads as written.
            if number.isFinite { writer.bytes.append(contentsOf: number.description.utf8) } else { writer.raw("null") }
        case .bool(let value): writer.raw(value ? "true" : "false")
        case .null: writer.raw("null")
        case .array(let elements):
            writer.array(elements) { writer, element in element.write(to: &writer) }
        case .object(let fields):
            writer.bytes.append(UInt8(ascii: "{"))
            var separated = false
            for (key, value) in fields { Self.writeMember(key, value, separated: &separated, to: &writer) }
            writer.bytes.append(UInt8(ascii: "}"))
        }
    }
}
