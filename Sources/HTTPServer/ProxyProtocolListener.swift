internal import CMicroHTTPD  // its shim brings sys/socket.h: SOCK_STREAM, SHUT_RDWR
import Foundation
import Synchronization
import SystemCalls

/// The listening socket of a server behind a balancer that sends the PROXY protocol (v2): libmicrohttpd has no
/// support for it, so connections are accepted here, each one's header is read (never a byte past it, which is
/// the client's request) within a deadline, and the connection is handed over with the client's address as its
/// peer. One thread polls them all, so a slow or silent peer holds a slot, not a thread. A peer that is not a
/// trusted proxy is closed at once: it could claim any address.
final class ProxyProtocolListener: @unchecked Sendable {  // `thread` is set once, before `stop` may run
    /// A connection waiting for the rest of its header.
    private struct Waiting {
        var socket: Int32
        var peer: IPAddress
        var peerAddress: sockaddr_storage
        var received: [UInt8] = []
        /// `ProxyProtocolHeader.fixedLength` until those bytes are in, then the whole header's length.
        var needed = ProxyProtocolHeader.fixedLength
        var deadline: ContinuousClock.Instant
    }

    let port: UInt16
    private let socket: Int32
    private let policy: ClientAddressPolicy
    private let timeout: Duration
    private let maxWaiting: Int
    private let report: @Sendable (String) -> Void
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// Binds and listens on `address`; nothing is accepted until `start`.
    init(
        address: sockaddr_storage, host: String, policy: ClientAddressPolicy, timeout: Duration, maxWaiting: Int,
        report: @escaping @Sendable (String) -> Void
    ) throws(HTTPServerError) {
        var address = address
        let descriptor = Glibc.socket(
            Int32(address.ss_family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
        var length = socketAddressLength(address)
        var on: Int32 = 1
        let listening =
            descriptor >= 0
            && setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
            && withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bind(descriptor, address, length) == 0 && listen(descriptor, SOMAXCONN) == 0
                        && getsockname(descriptor, address, &length) == 0
                }
            }
        guard listening else {
            let detail = errorText()
            if descriptor >= 0 { close(descriptor) }
            throw .couldNotStart(host: host, port: Self.port(of: address), detail: detail)
        }
        socket = descriptor
        port = Self.port(of: address)
        self.policy = policy
        self.timeout = timeout
        self.maxWaiting = max(1, maxWaiting)
        self.report = report
    }

    deinit { close(socket) }

    /// Starts accepting; `hand` takes each connection whose header was read, with the client's socket address
    /// (the peer's own for a LOCAL header), and owns the socket from then on.
    func start(hand: @escaping @Sendable (Int32, sockaddr_storage) -> Void) {
        let thread = Thread { [self] in
            run(hand: hand)
            finished.signal()
        }
        thread.name = "PROXY protocol listener"
        self.thread = thread
        thread.start()
    }

    /// Stops accepting and closes the connections still waiting for their header. Idempotent.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Shutting a listening socket down wakes the poll on it (Linux).
        shutdown(socket, Int32(SHUT_RDWR))
        if thread != nil { finished.wait() }
    }

    private func run(hand: @Sendable (Int32, sockaddr_storage) -> Void) {
        var waiting: [Waiting] = []
        defer { waiting.forEach { close($0.socket) } }
        while !stopping.load(ordering: .acquiring) {
            var polled = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
            polled += waiting.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
            // Until the nearest deadline (a millisecond past it), at most a second.
            let untilDeadline = waiting.map(\.deadline).min().map { ContinuousClock.now.duration(to: $0) }
            let milliseconds = untilDeadline.map { wait in
                max(0, wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000 + 1)
            }
            guard poll(&polled, nfds_t(polled.count), Int32(min(milliseconds ?? 1000, 1000))) >= 0 || errno == EINTR
            else { break }
            if stopping.load(ordering: .acquiring) { break }
            let now = ContinuousClock.now
            var stillWaiting: [Waiting] = []
            for (index, var connection) in waiting.enumerated() {
                do throws(ProxyProtocolError) {
                    if polled[index + 1].revents != 0, let header = try read(&connection) {
                        let client = header.source.map { $0.address.socketAddress(port: $0.port) }
                        hand(connection.socket, client ?? connection.peerAddress)
                        continue
                    }
                } catch {
                    // A peer that connects and closes having sent nothing (a port probe) claimed nothing.
                    if !connection.received.isEmpty {
                        report("closed a connection from \(connection.peer): \(error)")
                    }
                    close(connection.socket)
                    continue
                }
                if connection.deadline <= now {
                    report(
                        "closed a connection from \(connection.peer): it sent \(connection.received.count) bytes of a "
                            + "PROXY header in \(timeout.components.seconds) s")
                    close(connection.socket)
                } else {
                    stillWaiting.append(connection)
                }
            }
            waiting = stillWaiting
            if polled[0].revents != 0 { accept(into: &waiting) }
        }
    }

    /// Reads what is there of the header, never past it: the header once it is whole, else nil. Throws when
    /// the bytes cannot begin a header or the peer closed before it was whole.
    private func read(_ connection: inout Waiting) throws(ProxyProtocolError) -> ProxyProtocolHeader? {
        var buffer = [UInt8](repeating: 0, count: connection.needed - connection.received.count)
        let count = buffer.withUnsafeMutableBytes { recv(connection.socket, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        guard count > 0 else { throw .truncated(received: connection.received.count, needed: connection.needed) }
        connection.received += buffer[..<count]
        do {
            // Also refuses a peer that speaks HTTP at once, from its first bytes.
            connection.needed = try ProxyProtocolHeader.length(ofHeaderStartingWith: connection.received)
        } catch .truncated {
            return nil
        }
        guard connection.received.count == connection.needed else { return nil }
        return try ProxyProtocolHeader(parsing: connection.received)
    }

    private func accept(into waiting: inout [Waiting]) {
        while true {
            var peerAddress = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let connection = withUnsafeMutablePointer(to: &peerAddress) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.accept(socket, $0, &length)
                }
            }
            guard connection >= 0 else { return }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
            let peer = withUnsafePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { IPAddress($0) }
            }
            guard let peer, policy.isTrusted(peer) else {
                report(
                    "closed a connection from \(peer.map(\.description) ?? "an unknown address"): "
                        + "it is not a trusted proxy, and only those may send the PROXY header this listener requires")
                close(connection)
                continue
            }
            guard waiting.count < maxWaiting else {
                report("closed a connection from \(peer): \(maxWaiting) connections are waiting for their PROXY header")
                close(connection)
                continue
            }
            waiting.append(
                Waiting(
                    socket: connection, peer: peer, peerAddress: peerAddress, deadline: ContinuousClock.now + timeout))
        }
    }

    private static func port(of address: sockaddr_storage) -> UInt16 {
        var address = address
        let isIPv6 = address.ss_family == sa_family_t(AF_INET6)
        return withUnsafePointer(to: &address) { pointer in
            isIPv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin6_port)
                }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin_port)
                }
        }
    }
}
