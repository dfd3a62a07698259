import Foundation
import HTTPServer
import JSONCoding
import LoyaltyAPI

/// A request as a test writes it: `target` is the path and query as they go on the wire (percent-encoded).
public struct TestRequest: Sendable {
    public var method: String
    public var target: String
    public var headers: [String: String]
    public var body: [UInt8]?

    public init(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// What the handler gets when libmicrohttpd reads this request (HTTPServer): path and query decoded as its
    /// unescape callback does, header names lower-cased, the body's length declared.
    var handlerRequest: HTTPRequest {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let plain = pair.replacingOccurrences(of: "+", with: " ")
                let nameAndValue = plain.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[Self.unescaped(nameAndValue[0])] = nameAndValue.count == 2 ? Self.unescaped(nameAndValue[1]) : ""
            }
        }
        var headers = Dictionary(headers.map { ($0.lowercased(), $1) }) { $1 }
        if let body { headers["content-length"] = String(body.count) }
        return HTTPRequest(
            method: method, path: Self.unescaped(parts[0]), query: query, headers: headers, body: body ?? [],
            remoteAddress: "127.0.0.1")
    }

    /// Percent-decoding as the server's unescape callback does it: text holding "%00" stays encoded, a `%` not
    /// followed by two hex digits stays as it is, and bytes that are not UTF-8 become U+FFFD.
    private static func unescaped(_ text: some StringProtocol) -> String {
        guard !text.contains("%00") else { return String(text) }
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// What came back. Header names are lower-cased.
public struct TestResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The handler's answer as a client reads it from libmicrohttpd: no body for HEAD.
    init(handlerResponse response: HTTPResponse, to request: TestRequest) {
        self.init(
            status: response.status, headers: Dictionary(response.headers.map { ($0.lowercased(), $1) }) { $1 },
            // As libmicrohttpd: no body in an answer to HEAD, nor in a 304 (whose body gives its Content-Length).
            body: request.method == "HEAD" || response.status == 304 ? [] : response.body)
    }

    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try LoyaltyJSON.decoder().decode(T.self, from: Data(body))
    }

    public var errorCode: APIErrorCode? { (try? decode(APIErrorBody.self))?.error.code }
    public var errorField: String? { (try? decode(APIErrorBody.self))?.error.field }
    public var text: String { String(decoding: body, as: UTF8.self) }
}
