import Compression
import Foundation
import HTTPClient
import Synchronization
import HTTPServer
import Testing

/// A real server on loopback that answers with what it received: the method and the X-Custom and
/// X-Empty headers as response headers, the body as the body. "/slow" takes a second; "/missing" is 404.
private func echoServer() throws -> HTTPServer {
    return try HTTPServer(
        host: "127.0.0.1", port: 0, limits: HTTPServerLimits(), reject: { _ in HTTPResponse(status: 413) }
    ) { request in
        if request.path == "/slow" { usleep(1_000_000) }
        var headers = ["X-Method": request.method, "X-Path": request.path]
        headers["X-Custom"] = request.header("x-custom")
        headers["X-Empty"] = request.header("x-empty").map { "[\($0)]" }
        return HTTPResponse(status: request.path == "/missing" ? 404 : 200, headers: headers, body: request.body)
    }
}

@Suite struct HTTPClientTests {
    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH"])
    func methodsCarryBodyAndHeaders(method: String) throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = HTTPClient()
        let body: [UInt8] = [0x7B, 0x00, 0xFF, 0x0A, 0x7D]
        let response = try client.send(
            HTTPClientRequest(
                method: method, url: "http://127.0.0.1:\(server.port)/v1/things", headers: ["X-Custom": "42"],
                body: body))
        #expect(response.status == 200)
        #expect(response.header("X-METHOD") == method)
        #expect(response.headers["x-custom"] == "42")
        #expect(response.headers["content-length"] == "5")
        #expect(response.body == body)
    }

    /// An answer longer than the request allows is abandoned, not held: an endless body would fill memory.
    @Test func anAnswerPastItsLimitIsRefused() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = HTTPClient()
        let url = "http://127.0.0.1:\(server.port)/echo"
        let body = [UInt8](repeating: 1, count: 1000)
        let fits = try client.send(HTTPClientRequest(method: "POST", url: url, body: body, maximumResponseBytes: 1000))
        #expect(fits.body.count == 1000)
        #expect(throws: HTTPClientError.responseTooLarge(url: url, limit: 999)) {
            try client.send(HTTPClientRequest(method: "POST", url: url, body: body, maximumResponseBytes: 999))
        }
        // The handle still works afterwards.
        #expect(try client.send(HTTPClientRequest(url: url)).status == 200)
    }

    @Test func getHeadAndEmptyBodiesOnOneKeptAliveHandle() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let client = HTTPClient()
        let url = "http://127.0.0.1:\(server.port)/a%20b"

        let get = try client.send(HTTPClientRequest(url: url, headers: ["X-Empty": ""]))
        #expect(get.status == 200)
        #expect(get.header("x-method") == "GET")
        #expect(get.header("x-path") == "/a b")
        #expect(get.header("x-empty") == "[]")
        #expect(get.body.isEmpty)

        let head = try client.send(HTTPClientRequest(method: "HEAD", url: url))
        #expect(head.header("x-method") == "HEAD")

        let emptyPost = try client.send(HTTPClientRequest(method: "POST", url: url, body: []))
        #expect(emptyPost.header("x-method") == "POST")
        #expect(emptyPost.header("content-length") == "0")
    }

    @Test func errorStatusIsAResponse() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let response = try HTTPClient().send(HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/missing"))
        #expect(response.status == 404)
    }

    @Test func refusedConnectionIsCouldNotConnect() throws {
        let server = try echoServer()
        let port = server.port
        server.shutdown()
        let url = "http://127.0.0.1:\(port)/"
        #expect {
            _ = try HTTPClient().send(HTTPClientRequest(url: url))
        } throws: { error in
            guard case .couldNotConnect(let failedURL, let detail) = error as? HTTPClientError else { return false }
            return failedURL == url && !detail.isEmpty
        }
    }

    @Test func slowAnswerIsTimedOut() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/slow"
        let error = #expect(throws: HTTPClientError.self) {
            _ = try HTTPClient().send(HTTPClientRequest(url: url, totalTimeout: 0.2))
        }
        #expect(error == .timedOut(url: url, seconds: 0.2))
        #expect(error?.description.contains("within 0.2 s") == true)
    }

    /// A request whose `isCancelled` turns true is abandoned at libcurl's next progress check (about once a
    /// second), long before its timeout; one that stays false is answered as usual.
    @Test func aCancelledRequestIsAbandonedBeforeItsTimeout() throws {
        let server = try echoServer()
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/slow"
        let asked = Atomic<Int>(0)
        let error = #expect(throws: HTTPClientError.self) {
            _ = try HTTPClient().send(
                HTTPClientRequest(url: url, totalTimeout: 30, isCancelled: { asked.add(1, ordering: .relaxed).newValue > 1 }))
        }
        // Neither answered (no error) nor timed out (.timedOut): abandoned.
        #expect(error == .cancelled(url: url))
        let answered = try HTTPClient().send(HTTPClientRequest(url: url, isCancelled: { false }))
        #expect(answered.status == 200)
    }

    @Test func headerInjectionIsRefused() throws {
        let error = #expect(throws: HTTPClientError.self) {
            _ = try HTTPClient().send(
                HTTPClientRequest(url: "http://127.0.0.1:1/", headers: ["X-Custom": "a\r\nX-Admin: yes"]))
        }
        guard case .transport = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
    }

    @Test func unsupportedSchemeIsATransportError() throws {
        let error = #expect(throws: HTTPClientError.self) {
            _ = try HTTPClient().send(HTTPClientRequest(url: "file:///etc/passwd"))
        }
        guard case .transport(let code, _) = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(code == 1)  // CURLE_UNSUPPORTED_PROTOCOL
    }

    /// The client asks for gzip and gets the plain bytes back, in memory or in its body file.
    @Test func aGzippedAnswerArrivesDecoded() throws {
        let page = Array((0..<400).map { #"{"title":"Offer \#($0)"}"# }.joined(separator: ",").utf8)
        let server = try HTTPServer(host: "127.0.0.1", port: 0, reject: { _ in HTTPResponse(status: 413) }) { request in
            HTTPResponse(status: 200, headers: ["X-Asked": request.header("accept-encoding") ?? "none"], body: page)
        }
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/page"
        let answer = try HTTPClient().send(HTTPClientRequest(url: url))
        #expect(answer.header("x-asked") == "gzip" && answer.header("content-encoding") == "gzip")
        #expect(Int(answer.header("content-length") ?? "") ?? .max < page.count / 5)
        #expect(answer.body == page)
        var plain = HTTPClientRequest(url: url)
        plain.acceptsGzip = false
        let uncompressed = try HTTPClient().send(plain)
        #expect(uncompressed.header("x-asked") == "none" && uncompressed.header("content-encoding") == nil)
        #expect(uncompressed.body == page)
        let file = tmpfile()!
        defer { fclose(file) }
        var toFile = HTTPClientRequest(url: url)
        toFile.bodyFile = fileno(file)
        #expect(try HTTPClient().send(toFile).body.isEmpty)
        rewind(file)
        var written = [UInt8](repeating: 0, count: page.count + 1)
        #expect(fread(&written, 1, written.count, file) == page.count && Array(written.prefix(page.count)) == page)
    }

    /// A hostile server's 50 KiB of gzip that would expand to 64 MiB: the client stops at its answer limit, in
    /// memory and in a body file, as for any long body.
    @Test func aGzipBombStopsAtTheAnswerLimit() throws {
        let bomb = Gzip.compress([UInt8](repeating: 0x20, count: 64 << 20), level: 9)
        let server = try HTTPServer(host: "127.0.0.1", port: 0, reject: { _ in HTTPResponse(status: 413) }) { _ in
            HTTPResponse(status: 200, headers: ["Content-Encoding": "gzip"], body: bomb)
        }
        defer { server.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/catalog"
        #expect(bomb.count < 1 << 20)
        #expect(throws: HTTPClientError.responseTooLarge(url: url, limit: 1 << 20)) {
            try HTTPClient().send(HTTPClientRequest(url: url, maximumResponseBytes: 1 << 20))
        }
        let file = tmpfile()!
        defer { fclose(file) }
        var toFile = HTTPClientRequest(url: url, maximumResponseBytes: 1 << 20)
        toFile.bodyFile = fileno(file)
        #expect(throws: HTTPClientError.responseTooLarge(url: url, limit: 1 << 20)) { try HTTPClient().send(toFile) }
        #expect(lseek(fileno(file), 0, SEEK_END) <= 1 << 20)
    }
}
