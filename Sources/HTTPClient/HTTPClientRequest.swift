public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [String: String]
    public var body: [UInt8]?
    /// Seconds allowed to establish the connection (TCP and TLS).
    public var connectTimeout: Double
    /// Seconds allowed for the whole exchange, connection included.
    public var totalTimeout: Double
    /// Asked about once a second while the request runs: true abandons it (`HTTPClientError.cancelled`).
    public var isCancelled: (@Sendable () -> Bool)?
    /// The most bytes the answer's body may have: past it the transfer is abandoned
    /// (`HTTPClientError.responseTooLarge`), so a server (or anyone between, on plain http) sending an endless
    /// body cannot fill this process's memory. Size it by what the answer can be.
    public var maximumResponseBytes: Int
    /// A PEM file of the CAs whose certificates an https server's may chain to, instead of the system's
    /// (a private CA); nil: the system's.
    public var caFile: String?
    /// An open file that a 2xx answer's body is written to instead of `HTTPClientResponse.body`, so that a long
    /// answer (a catalog page) is never held in memory; still cut off at `maximumResponseBytes`.
    public var bodyFile: Int32?
    /// Asks for the answer gzipped (`Accept-Encoding: gzip`); libcurl decodes it, so `body` and `bodyFile` hold
    /// the plain bytes either way. Off only to see what goes over the wire uncompressed.
    public var acceptsGzip = true

    public init(
        method: String = "GET", url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        connectTimeout: Double = 5, totalTimeout: Double = 30, isCancelled: (@Sendable () -> Bool)? = nil,
        maximumResponseBytes: Int = 16 << 20, caFile: String? = nil
    ) {
        self.caFile = caFile
        self.isCancelled = isCancelled
        self.maximumResponseBytes = maximumResponseBytes
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
    }
}

public struct HTTPClientResponse: Sendable {
    public var status: Int
    /// Names lower-cased; repeated headers are joined with ", ".
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

/// Why no HTTP response came back. An HTTP error status is a response, not one of these.
public enum HTTPClientError: Error, CustomStringConvertible, Equatable {
    /// The host did not resolve, or nothing accepted the connection.
    case couldNotConnect(url: String, detail: String)
    /// No complete answer within `seconds` (the connect or the total timeout, whichever ran out).
    case timedOut(url: String, seconds: Double)
    /// Any other failure of the transfer; `code` is libcurl's CURLcode.
    case transport(code: Int, detail: String)
    /// libcurl itself could not be loaded or set up: no request can be sent until it is installed (or memory is free).
    case libraryUnavailable(String)
    /// The request's `isCancelled` said to stop before the answer came.
    case cancelled(url: String)
    /// The answer's body was longer than the request's `maximumResponseBytes`: abandoned there.
    case responseTooLarge(url: String, limit: Int)
    /// The https server's certificate was not trusted (or the CA file could not be read): nothing was sent.
    case untrustedCertificate(url: String, detail: String)

    public var description: String {
        switch self {
        case .couldNotConnect(let url, let detail):
            "could not connect to \(url) (\(detail)); check that the server is running and that the URL is right"
        case .timedOut(let url, let seconds):
            "no answer from \(url) within \(seconds) s; the server or the network is slow or down, try again later"
        case .transport(let code, let detail):
            "HTTP transfer failed (libcurl error \(code)): \(detail)"
        case .libraryUnavailable(let detail): detail
        case .cancelled(let url): "the request to \(url) was abandoned: the command is ending"
        case .responseTooLarge(let url, let limit):
            "the answer from \(url) is longer than the \(limit) bytes such an answer can be, so it was abandoned; is that a loyalty server, and is nothing between rewriting its answers?"
        case .untrustedCertificate(let url, let detail):
            "the certificate of \(url) is not trusted (\(detail)), so nothing was sent"
        }
    }
}
