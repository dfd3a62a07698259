import Foundation
import SystemCalls

/// A deliberately plain HTTP/1.1 client over a TCP socket, so the tests see exactly the bytes the
/// server sends and can send bytes no well-behaved client library would (chunked oversize bodies,
/// lying Content-Length).
struct LoopbackConnection: ~Copyable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private let socket: Int32

    /// `source`: the IPv4 loopback address to connect from (127.0.0.2 is another client than 127.0.0.1).
    init(host: String = "127.0.0.1", port: UInt16, from source: String? = nil) throws {
        let isIPv6 = host.contains(":")
        socket = Glibc.socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else {
            throw Failure(description: "socket: \(errorText())")
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let reason = errorText()
                close(socket)
                throw Failure(description: "bind to \(source): \(reason)")
            }
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let status: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard status == 0 else {
            let reason = errorText()
            close(socket)
            throw Failure(description: "connect to \(host):\(port): \(reason)")
        }
    }

    deinit { close(socket) }

    /// Writes all of `bytes`; MSG_NOSIGNAL so a server that closes early gives an error, not SIGPIPE.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else {
                throw Failure(description: "send: \(errorText())")
            }
            sent += written
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads one response whose length is given by Content-Length.
    func receive() throws -> Response {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let response = try Self.parse(received) { return response }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw Failure(
                    description:
                        "connection ended after \(received.count) bytes: \(String(decoding: received, as: UTF8.self))"
                )
            }
            received += buffer[..<count]
        }
    }

    /// True when bytes from the server are waiting to be read.
    func hasDataWaiting() -> Bool {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// True when bytes from the server (or its closing) arrive within `waiting`.
    func hasDataWaiting(waiting: Duration) -> Bool {
        let milliseconds = Int32(waiting.components.seconds * 1000 + waiting.components.attoseconds / 1_000_000_000_000_000)
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    /// True when the server has closed its side (recv returns 0 rather than timing out).
    /// Whether the server closes the connection, after whatever answer (a 413) it wrote before closing.
    func isClosedByServer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Every byte the server sends until it closes the connection (or 10 s pass without one).
    func readUntilClosed() -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { return received }
            received += buffer[..<count]
        }
    }

    /// Whether the server closes the connection within `waiting`, without reading what it sent.
    func isClosed(waiting: Duration) -> Bool {
        guard hasDataWaiting(waiting: waiting) else { return false }
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    private static func parse(_ bytes: [UInt8]) throws -> Response? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard
            let end = bytes.indices.dropLast(3).first(where: {
                bytes[$0..<$0 + 4].elementsEqual(separator)
            })
        else {
            return nil
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line: \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = end + 4
        guard bytes.count >= bodyStart + length else { return nil }
        return Response(
            status: status, headers: headers, body: Array(bytes[bodyStart..<bodyStart + length]))
    }
}
