import Foundation
import HTTPServer
import Testing

/// Request heads past what a connection's memory holds (issue 23, item 15): more query parameters than it has room
/// for once got no answer and held the connection until its idle timeout; now each such head is answered 414 or 431
/// at once and its connection closed, and the server goes on serving.
@Suite struct OversizedHeadTests {
    /// Answers with the number of query parameters it was given.
    private func server() throws -> HTTPServer {
        return try HTTPServer(
            host: "127.0.0.1", port: 0, limits: HTTPServerLimits(),
            reject: { rejection in
                guard case .tooManyQueryParameters(let limit) = rejection else { return HTTPResponse(status: 400) }
                return HTTPResponse(status: 414, body: Array("more than \(limit)".utf8))
            },
            handler: { HTTPResponse(status: 200, body: Array("\($0.query.count) parameters".utf8)) },
            diagnostics: { _ in })
    }

    /// Sends `head` and returns the answer, and whether the server then closed the connection. The server may answer
    /// and close before it has read the whole head, so a failed send is no failure.
    private func answer(to head: String, port: UInt16) throws -> (LoopbackConnection.Response, closed: Bool) {
        let connection = try LoopbackConnection(port: port)
        try? connection.send(head)
        return (try connection.receive(), connection.isClosedByServer())
    }

    private func query(_ count: Int) -> String { (0..<count).map { "p\($0)=\($0)" }.joined(separator: "&") }

    /// Fifty times over, so that a crash or a hang that comes now and then shows; then an ordinary request.
    @Test func manyQueryParametersAreAnswered414EveryTime() throws {
        let server = try server()
        defer { server.shutdown() }
        let started = ContinuousClock.now
        for run in 0..<50 {
            // Past the limit, past what MHD's memory holds (a few hundred in 32 KiB), and empty pieces, which count
            // as parameters; each request line within the connection's memory (a longer one is MHD's own 414, below).
            let target = [
                "/?" + query(101), "/?" + query(2_000), "/x?" + query(1_000), "/?" + String(repeating: "&", count: 3_000),
            ][run % 4]
            let (refused, closed) = try answer(to: "GET \(target) HTTP/1.1\r\nHost: test\r\n\r\n", port: server.port)
            #expect(
                refused.status == 414 && refused.text == "more than 100", "run \(run): \(refused.status) \(refused.text)")
            #expect(closed, "run \(run): the connection stayed open")
        }
        #expect(ContinuousClock.now - started < .seconds(20), "fifty refusals took \(ContinuousClock.now - started)")
        let (served, _) = try answer(
            to: "GET /?\(query(100)) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(served.status == 200 && served.text == "100 parameters", "\(served.status) \(served.text)")
    }

    /// One value longer than the connection's memory: MHD's own 414.
    @Test func aVeryLongQueryValueIsAnswered414() throws {
        let server = try server()
        defer { server.shutdown() }
        let value = String(repeating: "v", count: 200_000)
        let (refused, closed) = try answer(to: "GET /?a=\(value) HTTP/1.1\r\nHost: test\r\n\r\n", port: server.port)
        #expect(refused.status == 414 && closed, "\(refused.status)")
        let (served, _) = try answer(
            to: "GET /?a=1 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(served.status == 200 && served.text == "1 parameters")
    }

    /// More header lines than the connection's memory holds: MHD's own 431.
    @Test func aHugeHeaderCountIsAnswered431() throws {
        let server = try server()
        defer { server.shutdown() }
        let lines = (0..<5_000).map { "X-H\($0): \($0)\r\n" }.joined()
        let (refused, closed) = try answer(to: "GET / HTTP/1.1\r\nHost: test\r\n\(lines)\r\n", port: server.port)
        #expect(refused.status == 431 && closed, "\(refused.status)")
        let (served, _) = try answer(to: "GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", port: server.port)
        #expect(served.status == 200)
    }
}
