import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server that answers what the test tells it to, whatever was asked: a hostile or broken server, which
/// the real one cannot be made into. Each request gets the first canned answer whose `request` its request
/// line starts with (`POST /v1/redemptions`), else a 404, then the connection is closed. Lives until released.
public final class CannedHTTPServer: @unchecked Sendable {  // the answers are set once; what came is under a lock
    public struct Answer: Sendable {
        public let request: String
        public let status: Int
        public let body: String
        /// Instead of `body`: this many bytes of filler, made as they are sent, until the client hangs up (a
        /// hostile server's endless answer).
        public let streamedBytes: Int?
        /// With `streamedBytes`: whether the head says the length (else the body ends when the connection does).
        public let saysLength: Bool
        /// More header lines (a `Link` to the next page).
        public let headers: [String: String]

        public init(_ request: String, status: Int, body: String, headers: [String: String] = [:]) {
            self.request = request
            self.status = status
            self.body = body
            self.headers = headers
            streamedBytes = nil
            saysLength = false
        }

        /// A 200 whose body is `bytes` long, streamed.
        public init(_ request: String, streamedBytes: Int, saysLength: Bool) {
            self.request = request
            status = 200
            body = ""
            self.streamedBytes = streamedBytes
            self.saysLength = saysLength
            headers = [:]
        }
    }

    private let socket: LoopbackSocket
    private let answers: [Answer]
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var requests: [String] = []

    /// Every request received so far, head and body as they came: what a client sent a server it should not trust.
    public var received: [String] { lock.withLock { requests } }

    public init(_ answers: [Answer]) throws {
        socket = try LoopbackSocket(listening: true)
        self.answers = answers
        Thread { [self] in
            while true {
                let connection = accept(socket.descriptor, nil, nil)
                if connection < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break  // shut down
                }
                answer(connection)
                close(connection)
            }
            finished.signal()
        }.start()
    }

    deinit {
        shutdown(socket.descriptor, Int32(SHUT_RDWR))  // wakes the accept
        finished.wait()
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { socket.url }

    private func answer(_ connection: Int32) {
        guard let request = Self.readRequest(connection) else { return }
        lock.withLock { requests.append(request) }
        let line = request.prefix { $0 != "\r" && $0 != "\n" }
        let answer = answers.first { line.hasPrefix($0.request) } ?? Answer("", status: 404, body: "")
        let body = Array(answer.body.utf8)
        let length = answer.streamedBytes.map { answer.saysLength ? "Content-Length: \($0)\r\n" : "" }
        let head =
            "HTTP/1.1 \(answer.status) Canned\r\nContent-Type: application/json\r\n"
            + answer.headers.map { "\($0): \($1)\r\n" }.joined()
            + (length ?? "Content-Length: \(body.count)\r\n") + "Connection: close\r\n\r\n"
        guard Self.send(Array(head.utf8) + body, to: connection), var left = answer.streamedBytes else { return }
        let filler = [UInt8](repeating: UInt8(ascii: " "), count: 64 << 10)
        while left > 0, Self.send(Array(filler.prefix(left)), to: connection) { left -= filler.count }
    }

    /// False when the client went away first.
    private static func send(_ bytes: [UInt8], to connection: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(connection, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    /// The request's head and as much body as its Content-Length says; nil when the client went away first.
    private static func readRequest(_ connection: Int32) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let length = text[..<end.lowerBound].split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) + length <= received.count {
                    return text
                }
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            received += buffer[0..<count]
        }
    }
}
