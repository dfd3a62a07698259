import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket on 127.0.0.1 at a port the kernel picked, closed when released.
public final class LoopbackSocket {
    public let port: UInt16
    let descriptor: Int32

    /// With `listening`, a server that hangs: it never accepts, so connections complete in its backlog and no
    /// answer ever comes. Without, only the port is held.
    public init(listening: Bool, port wanted: UInt16 = 0) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = wanted.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && (!listening || listen(descriptor, 8) == 0)
                    && getsockname(descriptor, address, &length) == 0
            }
        }
        guard descriptor >= 0, bound else {
            let failure = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            if descriptor >= 0 { close(descriptor) }
            throw failure
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// A port nothing listens on now, released at once for another process to bind. It is drawn from below the
    /// kernel's range for outgoing connections: a port from that range (the kernel's own pick for a bind) could be
    /// taken by some connection before that process binds it (a Patroni member's REST port once was).
    public static func freePort() throws -> UInt16 {
        for _ in 0..<100 {
            let port = UInt16.random(in: 10_000..<ephemeralPortsStart)
            if (try? LoopbackSocket(listening: false, port: port)) != nil { return port }
        }
        return try LoopbackSocket(listening: false).port
    }

    /// The first port of `net.ipv4.ip_local_port_range` (32768 unless configured otherwise).
    private static let ephemeralPortsStart: UInt16 = {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let first = range.split(whereSeparator: \.isWhitespace).first.flatMap { UInt16($0) } ?? 32_768
        return max(first, 10_001)
    }()
}
