import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import SystemCalls
import Testing

@testable import LoyaltyServer

// MARK: Database state and raw requests

extension TestServer {
    /// Every row of every table as JSON text, per table; with `ids`, only the rows whose text names one of
    /// them. Equal answers before and after a request prove that it wrote nothing.
    func rows(mentioning ids: [UUID]? = nil) throws -> [String: String] {
        try pool.withConnection { connection in
            let tables = try connection.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            ).map { row throws(PostgresError) in try row.decode("tablename", as: String.self) }
            var rows: [String: String] = [:]
            for table in tables {
                // The table names come from the catalog, not from input.
                let sql =
                    "SELECT coalesce(json_agg(t ORDER BY t::text), '[]')::text AS rows FROM \"\(table)\" t"
                let query =
                    if let ids {
                        PostgresQuery(
                            unsafeSQL: sql + " WHERE t::text ~* $1",
                            parameters: [ids.map(\.uuidString).joined(separator: "|")])
                    } else {
                        PostgresQuery(unsafeSQL: sql)
                    }
                rows[table] = try connection.query(query)[0].decode("rows", as: String.self)
            }
            return rows
        }
    }

    /// Waits until a session of this database waits on a lock, or `finished` says the work that should
    /// have blocked is done (then returns false at once); gives up after 30 s.
    func waitForALockWait(orUntil finished: () -> Bool) throws -> Bool {
        // A connection of its own: the pool's may all be lent to the work that blocks.
        let connection = try PostgresConnection(conninfo: conninfo)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !finished() {
            let waiting = try connection.query(
                """
                SELECT count(*) AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'
                """)[0].decode("n", as: Int.self)
            if waiting > 0 { return true }
            usleep(5_000)
        }
        return false
    }

    /// Sends a request over a plain socket with `target` exactly as given: a URL library would normalise
    /// `%2e%2e` or refuse bytes that this sends as they are.
    func raw(
        _ method: String, _ target: String, token: String? = nil, headerLines: [String] = [],
        body: [UInt8]? = nil
    ) throws -> TestResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for line in headerLines { head += line + "\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let received = try exchange(Array((head + "\r\n").utf8) + (body ?? []))
        let separator = Array("\r\n\r\n".utf8)
        let end = try #require(
            received.indices.dropLast(3).first { received[$0..<$0 + 4].elementsEqual(separator) },
            "no complete response: \(String(decoding: received, as: UTF8.self))")
        let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = try #require(
            Int(lines[0].split(separator: " ").dropFirst().first ?? ""), "\(lines[0])")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return TestResponse(status: status, headers: headers, body: Array(received[(end + 4)...]))
    }

    /// Writes `bytes` and reads until the server closes. A server that answers early and closes (414, 431)
    /// may cut the writing short; what it answered is still read.
    private func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "connect: \(errorText())")
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes {
                send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { break }
            sent += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return received
    }
}
