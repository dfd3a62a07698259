import Foundation
import HTTPServer
import Synchronization
import Testing

/// A connection the test keeps open while it opens others (a `LoopbackConnection` cannot go in an array), served
/// once so that the server has surely taken it.
private final class HeldConnection {
    let connection: LoopbackConnection

    init(port: UInt16) throws {
        connection = try LoopbackConnection(port: port)
        try connection.send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try connection.receive()
    }
}

private final class DiagnosticLines: Sendable {
    private let lines = Mutex<[String]>([])
    func record(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

private func server(_ configure: (inout HTTPServerLimits) -> Void, diagnostics: DiagnosticLines = DiagnosticLines())
    throws -> HTTPServer
{
    var limits = HTTPServerLimits()
    configure(&limits)
    return try HTTPServer(
        host: "127.0.0.1", port: 0, limits: limits,
        reject: { HTTPResponse(status: $0 == .bodyTooSlow ? 408 : 400, body: Array("refused".utf8)) },
        handler: { _ in HTTPResponse(status: 200, body: Array("served".utf8)) }, diagnostics: diagnostics.record)
}

/// Slow and greedy clients (issue 23, item 1): a head that trickles in, many connections from one address, and the
/// log they would flood.
@Suite struct SlowClientTests {
    /// Each header line resets the idle timeout; the head's own deadline still ends the connection.
    @Test func aHeadTricklingInIsCutOffAtItsDeadline() throws {
        let lines = DiagnosticLines()
        let server = try server({ $0.requestHeadTimeoutSeconds = 1 }, diagnostics: lines)
        defer { server.shutdown() }
        let slow = try LoopbackConnection(port: server.port)
        try slow.send("GET / HTTP/1.1\r\nHost: test\r\n")
        var linesSent = 0
        while linesSent < 50, !slow.isClosed(waiting: .milliseconds(200)) {
            try? slow.send("X-Drip-\(linesSent): 1\r\n")
            linesSent += 1
        }
        #expect(linesSent < 50, "the connection was still open after 50 header lines over 10 s")

        let other = try LoopbackConnection(port: server.port)
        try other.send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try other.receive().text == "served")
        #expect(lines.all.contains { $0.contains("request head took longer than 1 s") }, "\(lines.all)")
    }

    /// A keep-alive connection that sends nothing after an answer is closed at the head's deadline too, but it is
    /// an idle client, not a slow one: nothing is logged (a load generator's or a client pool's idle connections
    /// filled the log with "request head took longer" lines).
    @Test func anIdleKeepAliveConnectionIsClosedUnreported() throws {
        let lines = DiagnosticLines()
        let server = try server({ $0.requestHeadTimeoutSeconds = 1 }, diagnostics: lines)
        let idle = try LoopbackConnection(port: server.port)
        try idle.send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try idle.receive().text == "served")
        let started = ContinuousClock.now
        while !idle.isClosed(waiting: .milliseconds(200)), ContinuousClock.now - started < .seconds(10) {}
        #expect(ContinuousClock.now - started < .seconds(10), "the idle connection was still open after 10 s")
        server.shutdown()
        #expect(lines.all.isEmpty, "\(lines.all)")
    }

    /// Each body byte resets the idle timeout too; the body's own deadline (the head's 1 s plus 100 bytes at 50
    /// bytes/s) still ends it, with a 408 and one log line.
    @Test func aBodyTricklingInIsAnswered408AtItsDeadline() throws {
        let lines = DiagnosticLines()
        let server = try server(
            {
                $0.requestHeadTimeoutSeconds = 1
                $0.minimumBodyBytesPerSecond = 50
            }, diagnostics: lines)
        let slow = try LoopbackConnection(port: server.port)
        let started = ContinuousClock.now
        try slow.send("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n")
        var bytesSent = 0
        while bytesSent < 50, !slow.hasDataWaiting(waiting: .milliseconds(200)) {
            try slow.send("x")
            bytesSent += 1
        }
        #expect(bytesSent < 50, "no answer after 50 body bytes over 10 s")
        let answer = try slow.receive()
        #expect(answer.status == 408 && answer.text == "refused")
        let closed = slow.isClosedByServer()
        #expect(closed)
        #expect(ContinuousClock.now - started < .seconds(6), "the 408 came after \(ContinuousClock.now - started)")

        let other = try LoopbackConnection(port: server.port)
        try other.send("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nok")
        #expect(try other.receive().text == "served")
        server.shutdown()
        #expect(lines.all.filter { $0.contains("request body took longer than 1 s") }.count == 1, "\(lines.all)")
    }

    @Test func oneClientAddressCannotTakeEveryConnection() throws {
        let server = try server {
            $0.connectionsPerClientAddress = 3
            $0.requestHeadTimeoutSeconds = 60
        }
        defer { server.shutdown() }
        let held = try (0..<3).map { _ in try HeldConnection(port: server.port) }
        let fourth = try LoopbackConnection(port: server.port)
        let fourthClosed = fourth.isClosed(waiting: .seconds(5))
        #expect(fourthClosed, "a fourth connection from 127.0.0.1 was kept")

        let otherClient = try LoopbackConnection(port: server.port, from: "127.0.0.2")
        try otherClient.send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try otherClient.receive().text == "served")
        #expect(held.allSatisfy { !$0.connection.isClosed(waiting: .zero) })
    }

    /// A thousand refused connections once wrote a thousand log lines.
    @Test func refusedConnectionsAreLoggedOnceWithACount() throws {
        let lines = DiagnosticLines()
        let server = try server(
            {
                $0.connectionsPerClientAddress = 1
                $0.requestHeadTimeoutSeconds = 60
            }, diagnostics: lines)
        let held = try HeldConnection(port: server.port)
        for _ in 0..<20 {
            let refused = try LoopbackConnection(port: server.port)
            let closed = refused.isClosed(waiting: .seconds(5))
            #expect(closed)
        }
        server.shutdown()
        _ = held
        let logged = lines.all.filter { $0.contains("connection limit") }
        #expect(logged.count == 2, "\(logged)")
        #expect(logged.last?.contains("19 more like it") == true, "\(logged)")
    }
}
