#if canImport(Glibc)
    import Glibc
#endif
import LoyaltyAPI

/// A JSON value written with its keys in the order given, so lines read well (`"event"` first).
enum JSONValue {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    var text: String {
        var out = JSONLineBuffer()
        write(to: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    func write(to out: inout JSONLineBuffer) {
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

/// Prints one JSON object per line, through stdio's buffer (many lines cost few writes).
func printJSONLine(_ fields: [(String, JSONValue)]) {
    printOut(JSONValue.object(fields).text)
}

/// Writes a buffer's bytes to standard output at once (a range line is kilobytes). What `print` left in
/// stdio's buffer goes first, so lines keep their order.
func writeOut(_ buffer: JSONLineBuffer) {
    fflush(nil)  // every output stream; stdout itself is not concurrency-safe to name
    buffer.bytes.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
