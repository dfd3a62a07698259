/// A JSON value written with its keys in the order given, so lines read well (`"event"` first).
public enum JSONValue {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    public var text: String {
        var out = JSONLineBuffer(capacity: 256)
        write(to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// Writes the value's bytes into `out`.
    public func write(to out: inout JSONLineBuffer) {
        switch self {
        case .string(let s): out.string(s)
        case .int(let i): out.integer(i)
        case .double(let d):
            if d.isFinite { out.rawText(String(d)) } else { out.raw("null") }
        case .bool(let b): out.raw(b ? "true" : "false")
        case .null: out.raw("null")
        case .array(let items):
            out.byte("[")
            for (i, item) in items.enumerated() {
                if i > 0 { out.byte(",") }
                item.write(to: &out)
            }
            out.byte("]")
        case .object(let fields):
            out.byte("{")
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out.byte(",") }
                out.string(key)
                out.byte(":")
                value.write(to: &out)
            }
            out.byte("}")
        }
    }
}
