import Foundation
import SystemCalls

/// A bare controller at the other end of an H4 byte stream (TCP, a Unix socket, a serial line). It does
/// what the kernel does for an adapter: frames and reassembles packets, lets only the events scanning
/// needs through, and sets the controller up (Reset, the event masks) since no stack did.
final class H4Stream: HCIChannel {
    let adapter: String
    private let descriptor: Int32
    private let isTCP: Bool
    private var framer: H4Framer
    private var buffer = [UInt8](repeating: 0, count: 4096)

    /// Connects to `transport` (not `.kernel`) and sets the controller up.
    init(_ transport: HCITransport) throws(RadioError) {
        adapter = transport.description
        framer = H4Framer(source: adapter)
        switch transport {
        case .kernel:
            preconditionFailure("a kernel adapter is opened as an HCISocket")
        case .tcp(let host, let port):
            descriptor = try Self.connectTCP(host: host, port: port, name: adapter)
            isTCP = true
        case .unix(let path):
            descriptor = try Self.connectUnix(path: path, name: adapter)
            isTCP = false
        case .serial(let device, let baud):
            descriptor = try Self.openSerial(device: device, baud: baud, name: adapter)
            isTCP = false
        }
        do {
            try setUp()
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// A controller nobody set up: Reset (only here: on a kernel adapter it would disturb the stack),
    /// Set Event Mask with the defaults plus LE Meta (bit 61), LE Set Event Mask with the defaults plus
    /// Extended Advertising Report (bit 12). Without them a controller sends no advertising reports.
    private func setUp() throws(RadioError) {
        try send(HCICommand(ogf: 0x03, ocf: 0x0003), timeoutMilliseconds: 5000)
        let eventMask: UInt64 = 0x0000_1FFF_FFFF_FFFF | 1 << 61
        try send(HCICommand(ogf: 0x03, ocf: 0x0001, parameters: eventMask.littleEndianBytes))
        let leEventMask: UInt64 = 0x1F | 1 << 12
        try send(HCICommand(ogf: HCICommand.leControllerGroup, ocf: 0x0001, parameters: leEventMask.littleEndianBytes))
    }

    func write(command: HCICommand) throws(RadioError) {
        let packet = [UInt8(0x01)] + command.packet
        do throws(SystemCallError) {
            try writeAll(packet, to: descriptor)
        } catch {
            throw lost(call: "write(HCI command)", code: error.code)
        }
    }

    func readEvent(timeoutMilliseconds: Int32, wakeup: Int32?) throws(RadioError) -> [UInt8]? {
        let deadline = timeoutMilliseconds < 0 ? nil : monotonicMilliseconds() + Int64(timeoutMilliseconds)
        // The stream is polled at least once, so a timeout of 0 reads what has arrived.
        var polledOnce = false
        while true {
            while let packet = try framer.next() {
                if packet.indicator == H4Framer.eventIndicator, Self.passes(packet.bytes) { return packet.bytes }
            }
            var remaining: Int32 = -1
            if let deadline {
                let left = deadline - monotonicMilliseconds()
                if left <= 0, polledOnce { return nil }
                remaining = Int32(clamping: max(0, left))
            }
            polledOnce = true
            var polled = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            if let wakeup { polled.append(pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&polled, nfds_t(polled.count), remaining)
            if ready < 0 {
                if errno == EINTR { return nil }
                throw .system(call: "poll", errno: errno)
            }
            if polled.count == 2, polled[1].revents != 0 { return nil }
            guard ready > 0, polled[0].revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { throw lost(call: count == 0 ? nil : "read(H4 stream)") }
            framer.append(buffer[..<count])
            if isTCP { Self.quickAck(descriptor) }
        }
    }

    /// The kernel's filter, in user space: command answers and LE meta events.
    private static func passes(_ event: [UInt8]) -> Bool {
        guard let code = event.first else { return false }
        return code == 0x0E || code == 0x0F || code == 0x3E
    }

    /// The peer closed the stream (`call` nil) or it broke: the controller is gone.
    private func lost(call: String?, code: Int32 = errno) -> RadioError {
        guard let call else { return .transportClosed(adapter, detail: "the peer closed the connection") }
        return .transportClosed(adapter, detail: "\(call) failed: \(errorText(code))")
    }

    /// Re-armed after every read: the emulator's answers otherwise wait for a delayed ACK (about 40 ms
    /// per command).
    private static func quickAck(_ descriptor: Int32) {
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    private static func connectTCP(host: String, port: UInt16, name: String) throws(RadioError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw .transportUnreachable(name, detail: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var lastErrno: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(
                current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                current.pointee.ai_protocol)
            guard fd >= 0 else {
                lastErrno = errno
                continue
            }
            if connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                // Each command is a small write answered before the next: Nagle would hold it back.
                var on: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            lastErrno = errno
            close(fd)
        }
        throw .transportUnreachable(name, detail: errorText(lastErrno))
    }

    private static func connectUnix(path: String, name: String) throws(RadioError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .transportUnreachable(name, detail: "the socket path is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket(AF_UNIX)", errno: errno) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let detail = errorText()
            close(fd)
            throw .transportUnreachable(name, detail: detail)
        }
        return fd
    }

    /// Raw mode (no echo, no line discipline, 8N1) with RTS/CTS: an H4 UART has no other flow control.
    private static func openSerial(device: String, baud: Int, name: String) throws(RadioError) -> Int32 {
        let fd = open(device, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .transportUnreachable(name, detail: errorText()) }
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else {
            let detail = "not a serial line: \(errorText())"
            close(fd)
            throw .transportUnreachable(name, detail: detail)
        }
        cfmakeraw(&settings)
        settings.c_cflag |= tcflag_t(CRTSCTS) | tcflag_t(CLOCAL) | tcflag_t(CREAD)
        let speed = speedConstant(baud)
        guard cfsetispeed(&settings, speed) == 0, cfsetospeed(&settings, speed) == 0,
            tcsetattr(fd, TCSANOW, &settings) == 0
        else {
            let detail = "cannot set \(baud) baud with RTS/CTS: \(errorText())"
            close(fd)
            throw .transportUnreachable(name, detail: detail)
        }
        tcflush(fd, TCIOFLUSH)
        return fd
    }

    private static func speedConstant(_ baud: Int) -> speed_t {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_152_000: speed_t(B1152000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 2_500_000: speed_t(B2500000)
        case 3_000_000: speed_t(B3000000)
        case 3_500_000: speed_t(B3500000)
        case 4_000_000: speed_t(B4000000)
        default: speed_t(B115200)
        }
    }
}

extension UInt64 {
    var littleEndianBytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) } }
}
