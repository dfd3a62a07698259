/// A request as the handler sees it: the whole body is read before the handler runs.
public struct HTTPRequest: Sendable {
    public var method: String
    /// Percent-decoded, without the query string.
    public var path: String
    /// Decoded query parameters; when a name repeats, the last value wins.
    public var query: [String: String]
    /// Names lower-cased; repeated headers are joined with ", " (RFC 9110 section 5.3).
    public var headers: [String: String]
    public var body: [UInt8]
    /// Filled by `Router`: "/v1/x/{id}" matched against "/v1/x/7" gives ["id": "7"].
    public var pathParameters: [String: String] = [:]
    /// The pattern `Router` matched, e.g. "/v1/retailer/offers/{major}/{minor}": a label for
    /// metrics and logs whose cardinality does not grow with the ids in paths.
    public var route: String?
    /// The peer's IP address, e.g. "127.0.0.1" or "::1".
    public var remoteAddress: String

    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [], remoteAddress: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The value of header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers[Self.isLowercase(name) ? name : name.lowercased()]
    }

    /// Callers mostly ask by a lower-case name: no new string for those.
    private static func isLowercase(_ name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { !$0.contains { $0 &- UInt8(ascii: "A") < 26 } } ?? false
    }
}

extension String {
    /// Whether this is the header name `lowercaseName`, in any case: names are ASCII tokens (RFC 9110 section 5.1),
    /// compared on their bytes without making a lower-cased copy.
    public func isHeaderName(_ lowercaseName: StaticString) -> Bool {
        utf8.count == lowercaseName.utf8CodeUnitCount
            && lowercaseName.withUTF8Buffer { expected in
                zip(utf8, expected).allSatisfy { $0 &- UInt8(ascii: "A") < 26 ? $0 | 0x20 == $1 : $0 == $1 }
            }
    }
}

extension StringProtocol where UTF8View: BidirectionalCollection {
    /// Without the spaces and tabs around it, HTTP's optional whitespace (RFC 9110 section 5.6.3), which the RFC
    /// defines on octets. Trimmed on the UTF-8 bytes: a space or tab is one byte that never occurs inside another
    /// character, so the cuts fall on the text's boundaries without breaking it into Characters first (which cost
    /// more than the rest of reading a bearer token).
    @inlinable public var trimmingOptionalWhitespace: SubSequence {
        let isText = { (byte: UInt8) in byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: isText), let last = utf8.lastIndex(where: isText) else {
            return self[endIndex...]
        }
        return self[first..<utf8.index(after: last)]
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Content-Length is computed from `body`; a Content-Length set here is ignored.
    public var headers: [String: String]
    /// Not sent in an answer to HEAD, nor in a 304: there it gives the Content-Length only (libmicrohttpd 0.9.75
    /// announces one in every 304, and RFC 9110 section 8.6 wants the 200's).
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Requests the server refuses before they reach the handler; the application chooses the answer.
public enum HTTPRejection: Sendable, Equatable {
    /// The body is longer than `HTTPServerLimits.maxBodyBytes`; it was not buffered. The connection is closed.
    case bodyTooLarge(limit: Int)
    /// Where the request ends is ambiguous (RFC 9112 section 6.3): both Content-Length and
    /// Transfer-Encoding, two Content-Lengths, one that is no number, a Transfer-Encoding other than chunked; a
    /// header value holds a NUL, which would cut it short, or a name has whitespace before its colon (section 5.1);
    /// or an HTTP/1.1 request has no Host, or more than one (section 3.2). The connection is closed: what follows
    /// cannot be trusted.
    case malformedFraming(String)
    /// The bodies of the requests in flight hold `HTTPServerLimits.maxBodyBytesInFlight`, and this one's would
    /// pass it; it was not read. The connection is closed: the client may retry in a moment.
    case busy
    /// The answers queued and not yet sent hold `HTTPServerLimits.maxAnswerBytesInFlight`, and this request's
    /// answer would pass it; it was dropped (the handler had run). The client may retry in a moment.
    case answersBusy
    /// The request target has more than `HTTPServerLimits.maxQueryParameters` query parameters (the answer is
    /// to be 414). The connection is closed.
    case tooManyQueryParameters(limit: Int)
    /// The body came slower than `HTTPServerLimits.minimumBodyBytesPerSecond` allows (the answer is to be 408);
    /// what came is dropped and the connection closed.
    case bodyTooSlow
}
