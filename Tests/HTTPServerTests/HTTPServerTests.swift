import Compression
import Dispatch
import Foundation
import HTTPServer
import Synchronization
import Testing

/// Handlers that wait for one another.
private final class RunningHandlers: @unchecked Sendable {  // `running` is guarded by `arrived`
    private let arrived = NSCondition()
    private var running = 0

    /// Counts this handler in and waits until `count` are in, or `seconds` pass: whether they all came.
    func arrive(waitingFor count: Int, within seconds: Double) -> Bool {
        arrived.withLock {
            running += 1
            arrived.broadcast()
            let deadline = Date(timeIntervalSinceNow: seconds)
            while running < count && arrived.wait(until: deadline) {}
            return running >= count
        }
    }
}

/// The requests a handler saw, in order.
private final class Recorder: Sendable {
    private let requests = Mutex<[HTTPRequest]>([])
    func record(_ request: HTTPRequest) { requests.withLock { $0.append(request) } }
    var all: [HTTPRequest] { requests.withLock { $0 } }
}

private func testLimits(maxBodyBytes: Int = 64 * 1024) -> HTTPServerLimits {
    var limits = HTTPServerLimits()
    limits.maxBodyBytes = maxBodyBytes
    return limits
}

private let rejectAs413: @Sendable (HTTPRejection) -> HTTPResponse = { rejection in
    switch rejection {
    case .bodyTooLarge(let limit): HTTPResponse(status: 413, body: Array("limit \(limit)".utf8))
    case .malformedFraming(let reason): HTTPResponse(status: 400, body: Array(reason.utf8))
    case .busy, .answersBusy: HTTPResponse(status: 503)
    case .tooManyQueryParameters: HTTPResponse(status: 414)
    case .bodyTooSlow: HTTPResponse(status: 408)
    }
}

/// A server that records each request and answers 201 with a header and a fixed body. MHD's
/// messages (a cut-off sender is one) stay out of the test output.
private func recordingServer(_ recorder: Recorder, maxBodyBytes: Int = 64 * 1024) throws
    -> HTTPServer
{
    try HTTPServer(
        host: "127.0.0.1", port: 0, limits: testLimits(maxBodyBytes: maxBodyBytes), reject: rejectAs413,
        handler: {
            recorder.record($0)
            return HTTPResponse(
                status: 201, headers: ["X-Reply": "yes"], body: Array("hello \($0.body.count)".utf8))
        }, diagnostics: { _ in })
}

@Suite struct HTTPServerTests {
    @Test func requestPartsReachTheHandlerDecoded() throws {
        let recorder = Recorder()
        let server = try recordingServer(recorder)
        defer { server.shutdown() }
        #expect(server.port != 0)

        let connection = try LoopbackConnection(port: server.port)
        try connection.send(
            "POST /files/a%20b?x=1&y=a%2Bb+c&x=2&flag HTTP/1.1\r\nHost: test\r\nX-Test: One\r\nx-test: Two\r\n"
                + "Content-Length: 5\r\n\r\nabcde")
        let response = try connection.receive()

        #expect(response.status == 201)
        #expect(response.headers["x-reply"] == "yes")
        #expect(response.text == "hello 5")
        let request = try #require(recorder.all.first)
        #expect(request.method == "POST")
        #expect(request.path == "/files/a b")
        #expect(request.query == ["x": "2", "y": "a+b c", "flag": ""])
        #expect(request.headers["x-test"] == "One, Two")
        #expect(request.header("X-TEST") == "One, Two")
        #expect(request.header("Content-Length") == "5")
        #expect(request.body == Array("abcde".utf8))
        #expect(request.remoteAddress == "127.0.0.1")
    }

    @Test func headerNamesMatchInAnyCase() {
        #expect("Content-Length".isHeaderName("content-length"))
        #expect("CACHE-CONTROL".isHeaderName("cache-control"))
        #expect("allow".isHeaderName("allow"))
        #expect(!"Allow2".isHeaderName("allow"))
        #expect(!"Allo".isHeaderName("allow"))
        // Only ASCII letters fold: "[" is "{" less 0x20, and a non-ASCII name is another name.
        #expect(!"[".isHeaderName("{"))
        #expect(!"Allöw".isHeaderName("allow"))
    }

    @Test func optionalWhitespaceIsTrimmedAroundAnyText() {
        #expect(" \t a b \t ".trimmingOptionalWhitespace == "a b")
        #expect("\t\t".trimmingOptionalWhitespace.isEmpty)
        #expect("".trimmingOptionalWhitespace.isEmpty)
        #expect("é".trimmingOptionalWhitespace == "é")
        #expect("  naïve café  ".trimmingOptionalWhitespace == "naïve café")
        // Only space and tab: other whitespace is text to HTTP.
        #expect("\u{A0}x\n".trimmingOptionalWhitespace == "\u{A0}x\n")
        let padded = " 🙂 "
        #expect(padded.dropFirst(0).trimmingOptionalWhitespace == "🙂")
    }

    @Test func keepAliveConnectionServesSeveralRequests() throws {
        let recorder = Recorder()
        let server = try recordingServer(recorder)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        for body in ["one", "three"] {
            try connection.send(
                "PUT /x HTTP/1.1\r\nHost: test\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            let response = try connection.receive()
            #expect(response.text == "hello \(body.utf8.count)")
        }
        #expect(recorder.all.map { String(decoding: $0.body, as: UTF8.self) } == ["one", "three"])
    }

    @Test func chunkedBodyWithinTheLimitIsAssembled() throws {
        let recorder = Recorder()
        let server = try recordingServer(recorder, maxBodyBytes: 1024)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        try connection.send("4\r\nabcd\r\n")
        try connection.send("3\r\nefg\r\n0\r\n\r\n")
        let response = try connection.receive()
        #expect(response.status == 201)
        #expect(recorder.all.first?.body == Array("abcdefg".utf8))
    }

    @Test func declaredOversizedBodyIsRejectedBeforeItIsRead() throws {
        let recorder = Recorder()
        let server = try recordingServer(recorder, maxBodyBytes: 1024)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nHost: test\r\nContent-Length: 1025\r\n\r\n")
        let response = try connection.receive()
        #expect(response.status == 413)
        #expect(response.text == "limit 1024")
        #expect(recorder.all.isEmpty)
    }

    @Test func chunkedOversizedBodyIsRejected() throws {
        let recorder = Recorder()
        let server = try recordingServer(recorder, maxBodyBytes: 1024)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = String(repeating: "z", count: 1000)
        for _ in 0..<3 { try connection.send("3e8\r\n\(chunk)\r\n") }
        try connection.send("0\r\n\r\n")
        let response = try connection.receive()
        #expect(response.status == 413)
        #expect(recorder.all.isEmpty)
    }

    @Test func endlessOversizedChunkedBodyIsCutOff() throws {
        let recorder = Recorder()
        let server = try recordingServer(recorder, maxBodyBytes: 1024)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = "4000\r\n" + String(repeating: "z", count: 0x4000) + "\r\n"
        var sendFailed = false
        for _ in 0..<(4 << 20) / 0x4000 where !sendFailed {
            do { try connection.send(chunk) } catch { sendFailed = true }
        }
        #expect(sendFailed || connection.isClosedByServer())
        #expect(recorder.all.isEmpty)
    }

    @Test func routerDispatchesOverHTTP() throws {
        var router = Router()
        router.add("GET", "/v1/retailer/offers/{major}/{minor}") { request in
            let text =
                "\(request.route ?? "-") \(request.pathParameters["major"] ?? "-") \(request.pathParameters["minor"] ?? "-")"
            return HTTPResponse(status: 200, body: Array(text.utf8))
        }
        router.add("PUT", "/v1/retailer/offers/{major}/{minor}") { _ in HTTPResponse(status: 204) }
        let routes = router
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: testLimits(), reject: rejectAs413
        ) { request in
            routes.respond(
                to: request, notFound: { _ in HTTPResponse(status: 404) },
                methodNotAllowed: { _, _ in HTTPResponse(status: 405) })
        }
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)

        try connection.send("GET /v1/retailer/offers/1/2 HTTP/1.1\r\nHost: test\r\n\r\n")
        let found = try connection.receive()
        #expect(found.status == 200)
        #expect(found.text == "/v1/retailer/offers/{major}/{minor} 1 2")

        try connection.send("GET /v1/retailer/offers/1 HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connection.receive().status == 404)

        try connection.send("DELETE /v1/retailer/offers/1/2 HTTP/1.1\r\nHost: test\r\n\r\n")
        let notAllowed = try connection.receive()
        #expect(notAllowed.status == 405)
        #expect(notAllowed.headers["allow"] == "GET, PUT")
    }

    @Test func shutdownFinishesTheRequestInFlightThenRefusesConnections() throws {
        let entered = DispatchSemaphore(value: 0)
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: testLimits(), reject: rejectAs413
        ) { _ in
            entered.signal()
            usleep(300_000)
            return HTTPResponse(status: 200, body: Array("finished".utf8))
        }
        let port = server.port
        let connection = try LoopbackConnection(port: port)
        try connection.send("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n")
        entered.wait()

        server.shutdown(gracePeriod: .seconds(10))

        let response = try connection.receive()
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(response.headers["connection"]?.lowercased() == "close")
        #expect(throws: LoopbackConnection.Failure.self) { _ = try LoopbackConnection(port: port) }
        server.shutdown()
    }

    /// Every connection's handler runs while the others' wait (on the database, in the server): 16 connections
    /// opened at once, as a load generator or a proxy opens them, have 16 handlers running together. With a pool of
    /// workers each polling a set of connections, MHD handed a worker up to 10 connections at one accept, and a
    /// blocked handler held up its whole set.
    @Test func everyConnectionsHandlerRunsWhileTheOthersWait() throws {
        let connections = 16
        let handlers = RunningHandlers()
        let server = try HTTPServer(host: "127.0.0.1", port: 0, limits: testLimits(), reject: rejectAs413) { _ in
            let together = handlers.arrive(waitingFor: connections, within: 10)
            return HTTPResponse(status: 200, body: Array((together ? "together" : "alone").utf8))
        }
        defer { server.shutdown() }
        let answers = Mutex<[String]>([])
        let done = DispatchGroup()
        for _ in 0..<connections {
            done.enter()
            Thread {
                defer { done.leave() }
                let text: String
                do {
                    let connection = try LoopbackConnection(port: server.port)
                    try connection.send("GET /wait HTTP/1.1\r\nHost: test\r\n\r\n")
                    text = try connection.receive().text
                } catch {
                    text = "\(error)"
                }
                answers.withLock { $0.append(text) }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(answers.withLock { $0 } == Array(repeating: "together", count: connections))
    }

    @Test func servesIPv6Loopback() throws {
        let recorder = Recorder()
        let server = try HTTPServer(host: "::1", port: 0, limits: testLimits(), reject: rejectAs413) {
            recorder.record($0)
            return HTTPResponse(status: 200)
        }
        defer { server.shutdown() }
        let connection = try LoopbackConnection(host: "::1", port: server.port)
        try connection.send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connection.receive().status == 200)
        #expect(recorder.all.first?.remoteAddress == "::1")
    }

    @Test func unknownHostIsATypedError() {
        #expect {
            _ = try HTTPServer(host: "no-such-host.invalid", port: 0, reject: rejectAs413) { _ in
                HTTPResponse(status: 200)
            }
        } throws: { error in
            guard case .invalidHost(let host, _) = error as? HTTPServerError else { return false }
            return host == "no-such-host.invalid"
        }
    }

    @Test func portInUseIsATypedError() throws {
        let first = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: testLimits(), reject: rejectAs413
        ) { _ in
            HTTPResponse(status: 200)
        }
        defer { first.shutdown() }
        #expect {
            _ = try HTTPServer(
                host: "127.0.0.1", port: first.port, limits: testLimits(), reject: rejectAs413,
                handler: { _ in HTTPResponse(status: 200) }, diagnostics: { _ in })
        } throws: { error in
            guard case .couldNotStart(_, let port, let detail) = error as? HTTPServerError else {
                return false
            }
            return port == first.port && !detail.isEmpty
        }
    }
}

/// gzip on the wire: what the server compresses, and for whom.
@Suite struct GzipAnswerTests {
    private static let page = Array(
        (0..<500).map { #"{"title":"Offer \#($0)","description":"Two for one"}"# }.joined(separator: ",").utf8)

    /// Answers `page` (with a strong tag) on /page, a short body on /short.
    private func server() throws -> HTTPServer {
        try HTTPServer(host: "127.0.0.1", port: 0, reject: rejectAs413) { request in
            request.path == "/short"
                ? HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
                : HTTPResponse(
                    status: 200, headers: ["Content-Type": "application/json", "ETag": "\"v7\""], body: Self.page)
        }
    }

    private func get(_ path: String, _ port: UInt16, acceptEncoding: String?) throws -> LoopbackConnection.Response {
        let connection = try LoopbackConnection(port: port)
        let accept = acceptEncoding.map { "Accept-Encoding: \($0)\r\n" } ?? ""
        try connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\(accept)Connection: close\r\n\r\n")
        return try connection.receive()
    }

    @Test func aLongAnswerIsGzippedForAClientThatTakesItAndTheSameOnceDecompressed() throws {
        let server = try server()
        defer { server.shutdown() }
        for accept in ["gzip", "deflate, gzip;q=0.5, br", "*", "x-gzip", "GZIP"] {
            let answer = try get("/page", server.port, acceptEncoding: accept)
            #expect(answer.headers["content-encoding"] == "gzip", "\(accept)")
            #expect(answer.headers["vary"] == "Accept-Encoding")
            #expect(answer.headers["etag"] == "W/\"v7\"", "the gzipped bytes are not the tag's: weak")
            #expect(Int(answer.headers["content-length"] ?? "") == answer.body.count)
            #expect(answer.body.count * 5 < Self.page.count)
            #expect(try Gzip.decompress(answer.body, limit: Self.page.count) == Self.page)
        }
    }

    @Test func withoutGzipInAcceptEncodingTheAnswerIsPlainButStillVaries() throws {
        let server = try server()
        defer { server.shutdown() }
        for accept in [nil, "identity", "gzip;q=0", "br, deflate", "*;q=0", "gzip;q=0, *"] {
            let answer = try get("/page", server.port, acceptEncoding: accept)
            #expect(answer.headers["content-encoding"] == nil, "\(accept ?? "none")")
            #expect(answer.headers["vary"] == "Accept-Encoding")
            #expect(answer.headers["etag"] == "\"v7\"")
            #expect(answer.body == Self.page)
        }
    }

    @Test func aShortAnswerIsNeverGzipped() throws {
        let server = try server()
        defer { server.shutdown() }
        let answer = try get("/short", server.port, acceptEncoding: "gzip")
        #expect(answer.headers["content-encoding"] == nil && answer.headers["vary"] == nil)
        #expect(answer.text == "{}")
    }
}
