import Geofencing
import SystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to gpsd over TCP that asks for JSON reports and hands them over line by line.
final class GPSDConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var finished = false

    init(host: String, port: UInt16) throws(Failure) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw Failure(description: "cannot resolve gpsd host \(host)")
        }
        defer { freeaddrinfo(first) }
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        var lastError: Int32 = 0
        while let address = candidate {
            let socketDescriptor = socket(
                address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            if socketDescriptor >= 0 {
                if connect(socketDescriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                    connected = socketDescriptor
                    break
                }
                lastError = errno
                close(socketDescriptor)
            }
            candidate = address.pointee.ai_next
        }
        guard connected >= 0 else {
            throw Failure(
                description:
                    "cannot connect to gpsd at \(host):\(port): \(errorText(lastError)) (is gpsd running? `systemctl start gpsd`, or gpsfake for a log)"
            )
        }
        descriptor = connected
        let command = Array(GPSDReport.watchCommand.utf8)
        guard
            command.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
                == command.count
        else {
            close(descriptor)
            throw Failure(description: "gpsd at \(host):\(port) closed the connection")
        }
    }

    deinit { close(descriptor) }

    /// The next line gpsd sent, or nil once it closed the connection.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if finished { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                finished = true
                if buffer.isEmpty { return nil }
                buffer.append(UInt8(ascii: "\n"))
            }
        }
    }
}
