import Foundation
import HTTPServer
import JSONCoding
import LoyaltyAPI

extension HTTPRequest {
    /// The body as `T`: 400 when it is not JSON, repeats a key or a value has the wrong JSON type, 422 for a
    /// missing, unknown or invalid field (a malformed UUID or date, 1.5 for an integer). An empty body reads as `{}` when `emptyIsObject`.
    func decodeBody<T: RequestBody>(_ type: T.Type, emptyIsObject: Bool = false) throws(APIFailure) -> T {
        let bytes = body.isEmpty && emptyIsObject ? Array("{}".utf8) : body
        // UTF-8 only (RFC 8259 section 8.1). Foundation would detect UTF-16 and UTF-32 and read them, so a
        // proxy or a log taking the bytes for UTF-8 would see another request than the one served.
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else {
            throw APIFailure(400, .malformedJSON, "the body is not valid JSON in UTF-8")
        }
        // A good body (nearly every one) is parsed once: by its table when it has one (the bodies shoppers and tills
        // send), else by the decoder; either proves it JSON and an object. The keys they skip are read from the
        // bytes. A body they refuse is read again, to say what is wrong with it.
        if let value = T.readByTable(bytes) ?? (try? LoyaltyJSON.decoder().decode(T.self, from: Data(bytes))) {
            try Self.checkKeys(JSONObjectKeys(scanning: bytes), of: T.self)
            do {
                try value.validate()
            } catch {
                throw APIFailure.invalid(error)
            }
            return value
        }
        let data = Data(bytes)
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            throw APIFailure(400, .malformedJSON, "the body is not valid JSON")
        }
        guard object is [String: Any] else {
            throw APIFailure(400, .malformedJSON, "the body must be a JSON object")
        }
        try Self.checkKeys(JSONObjectKeys(scanning: bytes), of: T.self)
        let value: T
        do {
            value = try LoyaltyJSON.decoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            let field = Self.fieldPath(context.codingPath + [key])
            throw APIFailure(422, .validationFailed, "\(field) is required", field: field)
        } catch let DecodingError.typeMismatch(expected, context) {
            let field = Self.fieldPath(context.codingPath)
            throw APIFailure(400, .malformedJSON, "\(field) must be \(Self.jsonTypeName(expected))", field: field)
        } catch let DecodingError.valueNotFound(expected, context) {
            let field = Self.fieldPath(context.codingPath)
            throw APIFailure(
                400, .malformedJSON, "\(field) must be \(Self.jsonTypeName(expected)), not null", field: field)
        } catch let DecodingError.dataCorrupted(context) {
            // The right JSON type with a value the field cannot hold: a malformed UUID or date, 1.5 for an integer.
            if context.codingPath.isEmpty, let field = Self.unrepresentableNumber(in: object, as: T.self) {
                throw APIFailure(422, .validationFailed, "\(field) must be an integer in range", field: field)
            }
            let field = Self.fieldPath(context.codingPath)
            let expectation =
                switch Self.value(at: context.codingPath, in: object) {
                case is String where context.debugDescription == LoyaltyJSON.timestampExpectation:
                    LoyaltyJSON.timestampExpectation
                case is String: "must be a UUID such as 8F0C1DDC-11E5-4A07-8910-425941B072F9"
                case is NSNumber: "must be an integer in range"
                default: "has a value of the wrong kind"
                }
            throw APIFailure(422, .validationFailed, "\(field) \(expectation)", field: field)
        } catch {
            throw APIFailure(400, .malformedJSON, "the body does not match the expected shape")
        }
        do {
            try value.validate()
        } catch {
            throw APIFailure.invalid(error)
        }
        return value
    }

    /// 400 for a key an object repeats, 422 for a field `T` does not have (in the body or in an element of one of
    /// its arrays of objects).
    private static func checkKeys<T: RequestBody>(_ keys: JSONObjectKeys, of type: T.Type) throws(APIFailure) {
        if let repeated = keys.repeated {
            throw APIFailure(
                400, .malformedJSON, "the key '\(repeated)' appears twice in one object; send it once", field: repeated)
        }
        // A key is looked up among the coding keys themselves: no set of names is made for a body that has none
        // other.
        if let unknown = keys.keys.sorted().first(where: { T.CodingKeys(stringValue: $0) == nil }) {
            throw APIFailure(
                422, .validationFailed,
                "unknown field '\(unknown)'; the fields are \(T.fieldNames.sorted().joined(separator: ", "))",
                field: unknown)
        }
        for (arrayField, allowed) in T.elementFieldNames {
            for (index, elementKeys) in (keys.elementKeys[arrayField] ?? [:]).sorted(by: { $0.key < $1.key }) {
                if let unknown = elementKeys.sorted().first(where: { !allowed.contains($0) }) {
                    let field = "\(arrayField)[\(index)].\(unknown)"
                    throw APIFailure(422, .validationFailed, "unknown field '\(field)'", field: field)
                }
            }
        }
    }

    /// Foundation's decoder calls a number an integer field cannot hold (1.5, 1e300) "not valid JSON", with no
    /// path: the field is the first such number whose replacement by 0 makes that error go away.
    private static func unrepresentableNumber<T: RequestBody>(in object: Any, as type: T.Type) -> String? {
        var candidates: [[any CodingKey]] = []
        func collect(_ value: Any, _ path: [any CodingKey]) {
            switch value {
            case let object as [String: Any]:
                for (key, value) in object.sorted(by: { $0.key < $1.key }) { collect(value, path + [PathKey(key)]) }
            case let array as [Any]:
                for (index, value) in array.enumerated() { collect(value, path + [PathKey(index)]) }
            case let number as NSNumber where !(value is Bool):
                let double = number.doubleValue
                if double != double.rounded() || abs(double) >= 0x1p63 { candidates.append(path) }
            default: break
            }
        }
        collect(object, [])
        for path in candidates {
            guard let data = try? JSONSerialization.data(withJSONObject: replacing(path[...], in: object, with: 0))
            else { continue }
            do {
                _ = try LoyaltyJSON.decoder().decode(T.self, from: data)
                return fieldPath(path)
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                continue
            } catch {
                return fieldPath(path)
            }
        }
        return nil
    }

    private struct PathKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(_ string: String) { stringValue = string }
        init(_ index: Int) {
            stringValue = String(index)
            intValue = index
        }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { self.init(intValue) }
    }

    private static func replacing(_ path: ArraySlice<any CodingKey>, in value: Any, with replacement: Any) -> Any {
        guard let key = path.first else { return replacement }
        if let index = key.intValue, var array = value as? [Any], array.indices.contains(index) {
            array[index] = replacing(path.dropFirst(), in: array[index], with: replacement)
            return array
        }
        guard var object = value as? [String: Any], let inner = object[key.stringValue] else { return value }
        object[key.stringValue] = replacing(path.dropFirst(), in: inner, with: replacement)
        return object
    }

    /// The JSON value a coding path leads to in a parsed body.
    private static func value(at path: [any CodingKey], in object: Any) -> Any? {
        var current: Any? = object
        for key in path {
            if let index = key.intValue, let array = current as? [Any] {
                current = array.indices.contains(index) ? array[index] : nil
            } else {
                current = (current as? [String: Any])?[key.stringValue]
            }
        }
        return current
    }

    /// `items[2].offer_id` for the coding path of a nested value.
    private static func fieldPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "body" : text
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type, is UUID.Type, is Date.Type: "a string"
        case is Int.Type, is UInt16.Type, is UInt8.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        default: "a \(type)"
        }
    }

    /// Whether If-None-Match names `tag` (a quoted opaque tag) or is `*` (RFC 9110 section 13.1.2). Compared weakly
    /// (a W/ prefix aside), as bytes, as the RFC compares opaque tags, in place: every 304 asks, and splitting the
    /// list cost more than the rest of the comparison.
    func ifNoneMatchNames(_ tag: String) -> Bool {
        guard var header = header("if-none-match") else { return false }
        let isOptionalWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var tag = tag
        return header.withUTF8 { header in
            tag.withUTF8 { tag in
                var start = 0
                while start < header.count {
                    let end = header[start...].firstIndex(of: UInt8(ascii: ",")) ?? header.count
                    var (lower, upper) = (start, end)
                    while lower < upper, isOptionalWhitespace(header[lower]) { lower += 1 }
                    while upper > lower, isOptionalWhitespace(header[upper - 1]) { upper -= 1 }
                    if upper - lower == 1 && header[lower] == UInt8(ascii: "*") { return true }
                    if upper - lower >= 2 && header[lower] == UInt8(ascii: "W") && header[lower + 1] == UInt8(ascii: "/") {
                        lower += 2
                    }
                    if upper - lower == tag.count && header[lower..<upper].elementsEqual(tag) { return true }
                    start = end + 1
                }
                return false
            }
        }
    }

    /// The bearer token of the Authorization header, if it has one.
    var bearerToken: String? {
        // The scheme is case-insensitive (RFC 9110 section 11.1), compared on its bytes: every request asks this
        // several times.
        guard var value = header("authorization") else { return nil }
        let isBearer = value.withUTF8 { bytes in
            bytes.count > 6 && bytes[6] == UInt8(ascii: " ")
                && zip(bytes, "bearer".utf8).allSatisfy { $0 | 0x20 == $1 }
        }
        guard isBearer else { return nil }
        let token = value[value.utf8.index(value.startIndex, offsetBy: 7)...].trimmingOptionalWhitespace
        return token.isEmpty ? nil : String(token)
    }
}

extension HTTPResponse {
    static func json<T: Encodable>(_ status: Int, _ value: T, headers: [String: String] = [:]) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        // Encoding these plain value types cannot fail. Those with a table (the answers shoppers and tills get most)
        // are written by it, the same bytes.
        let body = LoyaltyJSON.bytesByTable(value) ?? (try? LoyaltyJSON.encoder().encode(value)).map(Array.init) ?? []
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    static func failure(_ failure: APIFailure) -> HTTPResponse {
        .json(failure.status, failure.body, headers: failure.headers)
    }
}
