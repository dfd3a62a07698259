import Foundation

/// The keys of a JSON object's text, read in one pass over its bytes, which must be valid JSON: the first key that
/// an object repeats, the object's own keys and those of the objects in its arrays. JSONSerialization keeps one
/// value of a repeated key, and parsers disagree on which (the first here, the last in most others): a proxy or a
/// log could read another request than the one served.
struct JSONObjectKeys {
    /// The first key that appears twice in one object, at any depth.
    private(set) var repeated: String?
    /// The outermost object's keys, in order.
    private(set) var keys: [String] = []
    /// For each of the outermost object's keys whose value is an array: the keys of its elements that are objects,
    /// by the element's index.
    private(set) var elementKeys: [String: [Int: [String]]] = [:]

    private enum Container {
        case object(keys: Set<String>, expectingKey: Bool)
        case array(index: Int)
    }

    init(scanning bytes: [UInt8]) {
        var stack: [Container] = []
        var outerKey = ""
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"): stack.append(.object(keys: [], expectingKey: true))
            case UInt8(ascii: "["): stack.append(.array(index: 0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): stack.removeLast()
            case UInt8(ascii: ","):
                switch stack.last {
                case .object(let keys, _): stack[stack.count - 1] = .object(keys: keys, expectingKey: true)
                case .array(let element): stack[stack.count - 1] = .array(index: element + 1)
                case nil: break
                }
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
                    let key = Self.decodedKey(bytes[start...index], escaped: escaped)
                    if stack.count == 1 {
                        self.keys.append(key)
                        outerKey = key
                    } else if stack.count == 3, case .array(let element) = stack[1] {
                        elementKeys[outerKey, default: [:]][element, default: []].append(key)
                    }
                    guard keys.insert(key).inserted else {
                        repeated = key
                        return
                    }
                    stack[stack.count - 1] = .object(keys: keys, expectingKey: false)
                }
            default: break
            }
            index += 1
        }
    }

    /// A key's text: `"a"` and `"\u0061"` are the same key.
    private static func decodedKey(_ quoted: ArraySlice<UInt8>, escaped: Bool) -> String {
        guard escaped else { return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self) }
        let value = try? JSONSerialization.jsonObject(with: Data(quoted), options: [.fragmentsAllowed])
        return value as? String ?? String(decoding: quoted, as: UTF8.self)
    }
}
