import Foundation
import HTTPServer
import LoyaltyAPI

extension HTTPRequest {
    /// The body as `T`: 400 when it is not JSON or a value has the wrong type, 422 for a missing,
    /// unknown or invalid field. An empty body reads as `{}` when `emptyIsObject`.
    func decodeBody<T: RequestBody>(_ type: T.Type, emptyIsObject: Bool = false) throws(APIFailure) -> T {
        let bytes = body.isEmpty && emptyIsObject ? Array("{}".utf8) : body
        // UTF-8 only (RFC 8259 section 8.1). Foundation would detect UTF-16 and UTF-32 and read them, so a
        // proxy or a log taking the bytes for UTF-8 would see another request than the one served.
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else {
            throw APIFailure(400, .malformedJSON, "the body is not valid JSON in UTF-8")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            throw APIFailure(400, .malformedJSON, "the body is not valid JSON")
        }
        guard let fields = object as? [String: Any] else {
            throw APIFailure(400, .malformedJSON, "the body must be a JSON object")
        }
        if let unknown = fields.keys.sorted().first(where: { !T.fieldNames.contains($0) }) {
            throw APIFailure(
                422, .validationFailed,
                "unknown field '\(unknown)'; the fields are \(T.fieldNames.sorted().joined(separator: ", "))",
                field: unknown)
        }
        for (arrayField, allowed) in T.elementFieldNames {
            for (index, element) in (fields[arrayField] as? [Any] ?? []).enumerated() {
                guard let element = element as? [String: Any] else { continue }  // the decoder names the type error
                if let unknown = element.keys.sorted().first(where: { !allowed.contains($0) }) {
                    let field = "\(arrayField)[\(index)].\(unknown)"
                    throw APIFailure(422, .validationFailed, "unknown field '\(field)'", field: field)
                }
            }
        }
        let value: T
        do {
            value = try LoyaltyJSON.decoder().decode(T.self, from: Data(bytes))
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
            let field = Self.fieldPath(context.codingPath)
            throw APIFailure(400, .malformedJSON, "\(field): \(context.debugDescription)", field: field)
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
        case is Int.Type, is UInt16.Type: "an integer"
        case is Bool.Type: "a boolean"
        default: "a \(type)"
        }
    }

    /// The bearer token of the Authorization header, if it has one.
    var bearerToken: String? {
        guard let value = header("authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

extension HTTPResponse {
    static func json<T: Encodable>(_ status: Int, _ value: T, headers: [String: String] = [:]) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        // Encoding these plain value types cannot fail.
        let body = (try? LoyaltyJSON.encoder().encode(value)).map(Array.init) ?? []
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    static func failure(_ failure: APIFailure) -> HTTPResponse {
        .json(failure.status, failure.body, headers: failure.headers)
    }
}
