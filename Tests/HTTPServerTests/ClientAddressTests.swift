import Foundation
import HTTPServer
import Synchronization
import Testing

private final class Seen: Sendable {
    private let state = Mutex<(clients: [String], diagnostics: [String])>(([], []))
    func client(_ address: String) { state.withLock { $0.clients.append(address) } }
    func diagnostic(_ line: String) { state.withLock { $0.diagnostics.append(line) } }
    var clients: [String] { state.withLock { $0.clients } }
    var diagnostics: [String] { state.withLock { $0.diagnostics } }
}

/// A server that answers each request with the client address it saw.
private func server(_ policy: ClientAddressPolicy, _ seen: Seen, headTimeoutSeconds: Int = 10) throws -> HTTPServer {
    var limits = HTTPServerLimits()
    limits.requestHeadTimeoutSeconds = headTimeoutSeconds
    return try HTTPServer(
        host: "127.0.0.1", port: 0, limits: limits, clientAddresses: policy,
        reject: { _ in HTTPResponse(status: 400) },
        handler: {
            seen.client($0.remoteAddress)
            return HTTPResponse(status: 200, body: Array($0.remoteAddress.utf8))
        }, diagnostics: seen.diagnostic)
}

private let trustingLoopback = ClientAddressPolicy(trustedProxies: [IPAddressRange("127.0.0.1")!])
private let requiringProxyProtocol = ClientAddressPolicy(
    trustedProxies: [IPAddressRange("127.0.0.1")!], requiresProxyProtocol: true)

/// The client addresses behind a balancer (issue 24, item 3), over real sockets: a PROXY v2 header from a trusted
/// balancer, and X-Forwarded-For from a trusted proxy, name the client; from anyone else they are refused or ignored.
@Suite struct ClientAddressTests {
    @Test func aProxyHeaderFromTheBalancerNamesTheClientForEveryRequestOnTheConnection() throws {
        let seen = Seen()
        let server = try server(requiringProxyProtocol, seen)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        // The header and the request in one write, as HAProxy sends them.
        try connection.send(
            proxyHeader(addresses: ipv4Addresses(source: [192, 0, 2, 7], sourcePort: 40000, port: server.port))
                + Array("GET /a HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
        #expect(try connection.receive().text == "192.0.2.7")
        try connection.send("GET /b HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connection.receive().text == "192.0.2.7")

        // A header in pieces, then the request.
        let trickled = try LoopbackConnection(port: server.port)
        let header = proxyHeader(
            familyAndTransport: 0x21,
            addresses: [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [0x42]
                + Array(repeating: 0, count: 15) + [1] + [0x9C, 0x40, 0x1F, 0x90])
        for piece in [header.prefix(5), header[5..<17], header[17...]] {
            try trickled.send(Array(piece))
            Thread.sleep(forTimeInterval: 0.05)
        }
        try trickled.send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try trickled.receive().text == "2001:db8::42")

        // A health check (LOCAL) is the balancer's own connection.
        let check = try LoopbackConnection(port: server.port)
        try check.send(
            proxyHeader(command: 0x0, familyAndTransport: 0x00, addresses: [])
                + Array("GET /readyz HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
        #expect(try check.receive().text == "127.0.0.1")
        #expect(seen.clients == ["192.0.2.7", "192.0.2.7", "2001:db8::42", "127.0.0.1"])
    }

    @Test func aProxyListenerClosesUntrustedPeersAndBadHeadersWithALogLine() throws {
        let seen = Seen()
        let server = try server(requiringProxyProtocol, seen, headTimeoutSeconds: 1)
        defer { server.shutdown() }
        let header = proxyHeader(addresses: ipv4Addresses(source: [192, 0, 2, 7], sourcePort: 1, port: server.port))
        let request = Array("GET / HTTP/1.1\r\nHost: test\r\n\r\n".utf8)

        // 127.0.0.2 is not the balancer: its header could claim any address.
        let stranger = try LoopbackConnection(port: server.port, from: "127.0.0.2")
        try? stranger.send(header + request)
        let strangerClosed = stranger.isClosedByServer()
        #expect(strangerClosed)
        // A client speaking HTTP straight away, a v1 header, a header longer than the limit.
        for bytes in [request, Array("PROXY TCP4 192.0.2.7 127.0.0.1 1 2\r\n".utf8) + request,
            proxyHeader(addresses: [], length: 0xFFFF)]
        {
            let connection = try LoopbackConnection(port: server.port)
            try? connection.send(bytes)
            let connectionClosed = connection.isClosedByServer()
            #expect(connectionClosed)
        }
        // Half a header, then silence: closed at the deadline.
        let silent = try LoopbackConnection(port: server.port)
        try silent.send(Array(header.prefix(10)))
        let silentClosed = silent.isClosed(waiting: .seconds(5))
        #expect(silentClosed)

        #expect(seen.clients.isEmpty)
        let diagnostics = seen.diagnostics
        #expect(
            diagnostics.contains {
                $0.contains("closed a connection from 127.0.0.2") && $0.contains("not a trusted proxy")
            }, "\(diagnostics)")
        #expect(diagnostics.contains { $0.contains("does not begin with a PROXY protocol v2 header") }, "\(diagnostics)")
        #expect(diagnostics.contains { $0.contains("v1 (send-proxy) is not accepted") }, "\(diagnostics)")
        #expect(diagnostics.contains { $0.contains("over the limit") }, "\(diagnostics)")
        #expect(diagnostics.contains { $0.contains("sent 10 bytes of a PROXY header in 1 s") }, "\(diagnostics)")

        // The balancer is still served.
        let balancer = try LoopbackConnection(port: server.port)
        try balancer.send(header + request)
        #expect(try balancer.receive().text == "192.0.2.7")
    }

    /// The per-address connection cap counts the clients the balancer names, not the balancer.
    @Test func theConnectionCapIsPerClientBehindTheBalancer() throws {
        let seen = Seen()
        var limits = HTTPServerLimits()
        limits.connectionsPerClientAddress = 1
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: limits, clientAddresses: requiringProxyProtocol,
            reject: { _ in HTTPResponse(status: 400) },
            handler: { HTTPResponse(status: 200, body: Array($0.remoteAddress.utf8)) }, diagnostics: seen.diagnostic)
        defer { server.shutdown() }
        let request = Array("GET / HTTP/1.1\r\nHost: test\r\n\r\n".utf8)
        func header(_ last: UInt8) -> [UInt8] {
            proxyHeader(addresses: ipv4Addresses(source: [192, 0, 2, last], sourcePort: 1, port: server.port))
        }
        let first = try LoopbackConnection(port: server.port)
        try first.send(header(1) + request)
        #expect(try first.receive().text == "192.0.2.1")
        // A second client through the same balancer connection source is not over the cap.
        let second = try LoopbackConnection(port: server.port)
        try second.send(header(2) + request)
        #expect(try second.receive().text == "192.0.2.2")
        // The first client again, while its connection is open: over the cap of one.
        let again = try LoopbackConnection(port: server.port)
        try? again.send(header(1) + request)
        let againClosed = again.isClosedByServer()
        #expect(againClosed)
    }

    @Test func aProxyListenerServesIPv6() throws {
        let seen = Seen()
        let server = try HTTPServer(
            host: "::1", port: 0, limits: HTTPServerLimits(),
            clientAddresses: ClientAddressPolicy(trustedProxies: [IPAddressRange("::1")!], requiresProxyProtocol: true),
            reject: { _ in HTTPResponse(status: 400) },
            handler: { HTTPResponse(status: 200, body: Array($0.remoteAddress.utf8)) }, diagnostics: seen.diagnostic)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(host: "::1", port: server.port)
        try connection.send(
            proxyHeader(addresses: ipv4Addresses(source: [198, 51, 100, 20], sourcePort: 5, port: server.port))
                + Array("GET / HTTP/1.1\r\nHost: test\r\n\r\n".utf8))
        #expect(try connection.receive().text == "198.51.100.20")
    }

    @Test func forwardedForCountsOnlyFromATrustedProxy() throws {
        let seen = Seen()
        let server = try server(trustingLoopback, seen)
        defer { server.shutdown() }
        let proxy = try LoopbackConnection(port: server.port)
        try proxy.send("GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 198.51.100.1, 203.0.113.9\r\n\r\n")
        #expect(try proxy.receive().text == "203.0.113.9")
        // A client's own line first, the proxy's appended after it: the proxy's is the right-most entry.
        try proxy.send(
            "GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 10.9.9.9\r\nX-Forwarded-For: 203.0.113.10\r\n\r\n")
        #expect(try proxy.receive().text == "203.0.113.10")

        let stranger = try LoopbackConnection(port: server.port, from: "127.0.0.2")
        try stranger.send("GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n")
        #expect(try stranger.receive().text == "127.0.0.2")
        try stranger.send("GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 203.0.113.8\r\n\r\n")
        #expect(try stranger.receive().text == "127.0.0.2")
        #expect(seen.clients == ["203.0.113.9", "203.0.113.10", "127.0.0.2", "127.0.0.2"])
        // One line for the two, rate-limited as the server's other diagnostics are.
        #expect(
            seen.diagnostics == [
                "ignored X-Forwarded-For from 127.0.0.2, which is not a trusted proxy: its requests count as its own"
            ])
    }

    @Test func withoutTrustedProxiesForwardedForIsIgnored() throws {
        let seen = Seen()
        let server = try server(ClientAddressPolicy(), seen)
        defer { server.shutdown() }
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("GET / HTTP/1.1\r\nHost: test\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n")
        #expect(try connection.receive().text == "127.0.0.1")
        #expect(seen.diagnostics.count == 1)
    }
}
