import Foundation
import HTTPServer
import Synchronization
import Testing

/// Requests whose end proxies and servers could place differently (RFC 9112 section 6.3) are refused with
/// 400 and the connection closed, so no trailing bytes are ever read as a second request; an oversized
/// chunked body gets its 413 however long it goes on.
@Suite struct FramingTests {
    private final class Paths: Sendable {
        private let seen = Mutex<[String]>([])
        func record(_ path: String) { seen.withLock { $0.append(path) } }
        var all: [String] { seen.withLock { $0 } }
    }

    private func server(_ paths: Paths, maxBodyBytes: Int = 1024) throws -> HTTPServer {
        var limits = HTTPServerLimits()
        limits.maxBodyBytes = maxBodyBytes
        return try HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits,
            reject: { rejection in
                switch rejection {
                case .bodyTooLarge(let limit): HTTPResponse(status: 413, body: Array("limit \(limit)".utf8))
                case .malformedFraming(let problem): HTTPResponse(status: 400, body: Array(problem.utf8))
                case .busy, .answersBusy: HTTPResponse(status: 503)
                case .tooManyQueryParameters: HTTPResponse(status: 414)
                case .bodyTooSlow: HTTPResponse(status: 408)
                }
            },
            handler: { request in
                paths.record(request.path)
                return HTTPResponse(status: 200, body: Array("ok".utf8))
            },
            diagnostics: { _ in })
    }

    /// Sends `head` and what follows it in one write, expects a 400 naming `problem` and a closed connection.
    private func expectRefused(_ head: String, then rest: [UInt8] = [], problem: String) throws {
        let paths = Paths()
        let server = try server(paths)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send(Array(head.utf8) + rest)
        let response = try connection.receive()
        #expect(response.status == 400, "\(response.text)")
        #expect(response.text.contains(problem), "\(response.text)")
        #expect(response.headers["connection"]?.lowercased() == "close")
        let closed = connection.isClosedByServer()
        #expect(closed)
        #expect(paths.all.isEmpty, "the handler saw \(paths.all)")
    }

    @Test func contentLengthWithTransferEncodingIsRefusedAndTheConnectionClosed() throws {
        // Read as chunked, the body ends at "0"; what follows would be served as a second request.
        try expectRefused(
            "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 48\r\nTransfer-Encoding: chunked\r\n\r\n",
            then: Array("0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n".utf8),
            problem: "both Content-Length and Transfer-Encoding")
    }

    @Test func twoContentLengthsAreRefused() throws {
        try expectRefused(
            "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 41\r\n\r\n",
            then: Array("{}GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n".utf8),
            problem: "Content-Length is given 2 times")
    }

    @Test func aTransferEncodingOtherThanChunkedIsRefused() throws {
        try expectRefused(
            "POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            then: Array("0\r\n\r\n".utf8), problem: "Transfer-Encoding must be chunked")
    }

    /// Read as a C string, as libmicrohttpd hands it over, `Bearer key\0junk` would be `Bearer key`.
    @Test func aNULInAHeaderValueIsRefused() throws {
        try expectRefused(
            "GET /x HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer key\u{0}junk\r\n\r\n",
            problem: "a header value holds a NUL byte")
        // In the last header, and before a header that is fine. (A NUL at the very end of a value hides
        // nothing and cannot be told from the line's end.)
        try expectRefused("GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\u{0}b\r\n\r\n", problem: "NUL")
        try expectRefused("GET /x HTTP/1.1\nX-A: a\u{0}b\nHost: t\n\n", problem: "NUL")
        // A folded line (obs-fold, RFC 9112 section 5.2) is refused the same way.
        try expectRefused("GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\n\r\n", problem: "folded")
    }

    /// RFC 9112 section 5.1: no whitespace between a field name and its colon. Read as a header named
    /// "Content-Length " (which frames nothing), the body would be served as a second request.
    @Test func whitespaceBeforeAColonIsRefused() throws {
        try expectRefused(
            "POST /up HTTP/1.1\r\nHost: t\r\nContent-Length : 38\r\n\r\n",
            then: Array("GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n".utf8), problem: "whitespace before its colon")
        try expectRefused("GET /x HTTP/1.1\r\nHost: t\r\nX-A\t: a\r\n\r\n", problem: "whitespace before its colon")
    }

    /// RFC 9112 section 3.2: an HTTP/1.1 request names its host once (HTTP/1.0 may leave it out).
    @Test func aRequestWithoutAHostOrWithTwoIsRefused() throws {
        try expectRefused("GET /x HTTP/1.1\r\n\r\n", problem: "no Host header")
        try expectRefused("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", problem: "Host is given 2 times")
        try expectRefused("GET /x HTTP/1.1\r\nHost: a, b\r\n\r\n", problem: "Host")
        let paths = Paths()
        let server = try server(paths)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("GET /old HTTP/1.0\r\n\r\n")
        #expect(try connection.receive().status == 200)
        #expect(paths.all == ["/old"])
    }

    /// A Content-Length that is no number (RFC 9112 section 6.3, item 5) gets one answer, and the connection
    /// ends: not two answers back to back.
    @Test(arguments: [("-1", 400), ("2x", 400), ("2, 2", 400), ("", 400), ("+2", 400), ("99999999999999999999999", 413)])
    func anInvalidContentLengthGetsOneAnswerThenTheConnectionCloses(_ length: String, _ status: Int) throws {
        let paths = Paths()
        let server = try server(paths)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: \(length)\r\n\r\n{}")
        let everything = String(decoding: connection.readUntilClosed(), as: UTF8.self)
        #expect(everything.hasPrefix("HTTP/1.1 \(status) "), "\(everything)")
        #expect(everything.components(separatedBy: "HTTP/1.1 ").count == 2, "\(everything)")
        #expect(everything.contains("Content-Length"), "\(everything)")
        #expect(paths.all.isEmpty)
    }

    @Test func wellFramedRequestsStillPass() throws {
        let paths = Paths()
        let server = try server(paths)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        #expect(try connection.receive().status == 200)
        try connection.send("POST /b HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
        #expect(try connection.receive().status == 200)
        // Bare LFs, odd spacing, an empty value and a long one: no NUL is seen where there is none.
        let long = String(repeating: "v", count: 20_000)
        try connection.send("GET /c HTTP/1.1\nHost: t\nX-Empty:\nX-Spaced:  a  b \t\nX-Long: \(long)\n\n")
        #expect(try connection.receive().status == 200)
        try connection.send("GET /d HTTP/1.1\r\nHost:t\r\nX-Empty: \r\nX-Long: \(long)\r\nX-Z: z\r\n\r\n")
        #expect(try connection.receive().status == 200)
        #expect(paths.all == ["/a", "/b", "/c", "/d"])
    }

    /// Far past the limit and past what the server reads and drops: the sender still gets its 413 (the
    /// connection is suspended to queue it mid-body), then the connection ends.
    @Test func anEndlessChunkedBodyGets413() throws {
        let paths = Paths()
        let server = try server(paths)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = "4000\r\n" + String(repeating: "z", count: 0x4000) + "\r\n"
        // Like curl, the sender stops once an answer arrives (after that, the server's close may reset the
        // connection and the answer with it).
        for _ in 0..<(4 << 20) / 0x4000 where !connection.hasDataWaiting() {
            do { try connection.send(chunk) } catch { break }
        }
        let response = try connection.receive()
        #expect(response.status == 413 && response.text == "limit 1024")
        let closed = connection.isClosedByServer()
        #expect(closed)
        #expect(paths.all.isEmpty)
    }
}
