import Foundation

/// JSONSerialization keeps one value of a key that an object repeats, and parsers disagree on which (the
/// first here, the last in most others): a proxy or a log could read another request than the one served.
enum DuplicateJSONKeys {
    private enum Container {
        case object(keys: Set<String>, expectingKey: Bool)
        case array
    }

    /// The first key that appears twice in one object of `bytes`, which must be valid JSON.
    static func first(in bytes: [UInt8]) -> String? {
        var stack: [Container] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"): stack.append(.object(keys: [], expectingKey: true))
            case UInt8(ascii: "["): stack.append(.array)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): stack.removeLast()
            case UInt8(ascii: ","):
                if case .object(let keys, _) = stack.last { stack[stack.count - 1] = .object(keys: keys, expectingKey: true) }
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                index += 1
                while bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") {
                        escaped = true
                        index += 1
                    }
                    index += 1
                }
                if case .object(var keys, true) = stack.last {
                    let key = decodedKey(bytes[start...index], escaped: escaped)
                    guard keys.insert(key).inserted else { return key }
                    stack[stack.count - 1] = .object(keys: keys, expectingKey: false)
                }
            default: break
            }
            index += 1
        }
        return nil
    }

    /// A key's text: `"a"` and `"\u0061"` are the same key.
    private static func decodedKey(_ quoted: ArraySlice<UInt8>, escaped: Bool) -> String {
        guard escaped else { return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self) }
        let value = try? JSONSerialization.jsonObject(with: Data(quoted), options: [.fragmentsAllowed])
        return value as? String ?? String(decoding: quoted, as: UTF8.self)
    }
}
