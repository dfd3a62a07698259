import Foundation
import HTTPServer
import Testing

/// What all bodies in flight may hold together (issue 23, item 2): memory stays bounded whatever the number of
/// connections sending bodies.
@Suite struct BodyBudgetTests {
    @Test func aBodyPastWhatAllBodiesMayHoldIsRefusedUnread() throws {
        var limits = HTTPServerLimits()
        limits.maxBodyBytesInFlight = 1000
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits,
            reject: { HTTPResponse(status: $0 == .busy ? 503 : 400) },
            handler: { HTTPResponse(status: 200, body: Array("read \($0.body.count)".utf8)) }, diagnostics: { _ in })
        defer { server.shutdown() }
        let first = try LoopbackConnection(port: server.port)
        try first.send("POST /a HTTP/1.1\r\nHost: test\r\nContent-Length: 800\r\nExpect: 100-continue\r\n\r\n")
        // The 100 comes once its head is let in, its 800 bytes taken from the budget.
        #expect(try first.receive().status == 100)
        let second = try LoopbackConnection(port: server.port)
        try second.send("POST /b HTTP/1.1\r\nHost: test\r\nContent-Length: 800\r\n\r\n")
        #expect(try second.receive().status == 503)

        try first.send([UInt8](repeating: 0x61, count: 800))
        #expect(try first.receive().text == "read 800")
        let third = try LoopbackConnection(port: server.port)
        try third.send("POST /c HTTP/1.1\r\nHost: test\r\nContent-Length: 800\r\n\r\n" + String(repeating: "b", count: 800))
        #expect(try third.receive().text == "read 800")
    }
}

/// What all unsent answers may hold together (issue 41, item 3): 32 clients that asked for a 24 MB catalog page and
/// never read it once grew the server by 1.1-1.3 GB. An answer past the budget is refused, and one given back when
/// its connection closes makes room again.
@Suite struct AnswerBudgetTests {
    @Test func answersThatNoOneReadsHoldNoMoreThanTheBudget() throws {
        var limits = HTTPServerLimits()
        limits.maxAnswerBytesInFlight = 40 << 20
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits,
            reject: { HTTPResponse(status: $0 == .answersBusy ? 503 : 400) },
            handler: { _ in HTTPResponse(status: 200, body: [UInt8](repeating: 0x61, count: 16 << 20)) },
            diagnostics: { _ in })
        defer { server.shutdown() }
        // Two answers of 16 MiB, more than the sockets' buffers take, wait for clients that do not read.
        func ask() throws -> LoopbackConnection {
            let connection = try LoopbackConnection(port: server.port)
            try connection.send("GET /page HTTP/1.1\r\nHost: test\r\n\r\n")
            return connection
        }
        do {
            let first = try ask()
            let firstAnswered = first.hasDataWaiting(waiting: .seconds(10))
            let second = try ask()
            let secondAnswered = second.hasDataWaiting(waiting: .seconds(10))
            let refused = try ask().receive().status
            #expect(firstAnswered && secondAnswered && refused == 503)
        }  // closed: their answers are given back
        var status = 0
        for _ in 0..<50 where status != 200 {
            Thread.sleep(forTimeInterval: 0.1)
            status = try ask().receive().status
        }
        #expect(status == 200)
    }
}
