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
