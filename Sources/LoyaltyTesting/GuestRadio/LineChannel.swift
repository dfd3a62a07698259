import Foundation
import SystemCalls

/// Lines over one file descriptor (a pipe or a socket), each read with a deadline. Owns the descriptor.
final class LineChannel {
    private let descriptor: Int32
    private var buffered: [UInt8] = []

    init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Connects to a listening unix socket, retrying until `timeout` seconds have passed.
    static func connect(unixSocket path: String, timeout: Double) throws(GuestRadioError) -> LineChannel {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .failed("socket(AF_UNIX): \(errorText())") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected == 0 { return LineChannel(descriptor: fd) }
            close(fd)
            guard Date() < deadline else { throw .failed("cannot connect to \(path) within \(timeout) s") }
            usleep(50_000)
        }
    }

    func write(line: String) throws(GuestRadioError) {
        do throws(SystemCallError) {
            try writeAll(Array((line + "\n").utf8), to: descriptor)
        } catch {
            throw .failed("write: \(error)")
        }
    }

    /// The next line without its newline; nil at end of file. Throws when `timeout` seconds pass first.
    func readLine(timeout: Double, waitingFor what: String) throws(GuestRadioError) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw .timedOut("\(what) within \(timeout) s") }
            var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&polled, 1, Int32(min(remaining * 1000, 60_000)) + 1)
            if ready < 0, errno != EINTR { throw .failed("poll: \(errorText())") }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffered += chunk[..<count]
        }
    }
}
