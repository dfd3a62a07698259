/// Where the controller is: an adapter of the kernel's Bluetooth stack, or a bare controller at the other
/// end of an H4 byte stream (a UART controller, an emulator such as Root-Canal, a container without
/// kernel Bluetooth). The text forms are `--hci`'s: `hciN`, `tcp:HOST:PORT`, `unix:PATH`,
/// `serial:DEVICE[:BAUD]`.
public enum HCITransport: Hashable, Sendable, CustomStringConvertible {
    /// A kernel adapter (`hci0`); nil: the first one.
    case kernel(String?)
    case tcp(host: String, port: UInt16)
    case unix(path: String)
    /// A serial device with hardware flow control (RTS/CTS) at `baud`.
    case serial(device: String, baud: Int)

    /// The speed of a serial controller when none is named: Zephyr's `hci_uart` default.
    public static let defaultBaud = 115_200
    /// The speeds termios can set.
    static let baudRates = [
        9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 500_000, 576_000, 921_600, 1_000_000, 1_152_000,
        1_500_000, 2_000_000, 2_500_000, 3_000_000, 3_500_000, 4_000_000,
    ]

    /// Reads `--hci`'s text; nil when it is none of the forms.
    public init?(parsing text: String) {
        if Self.isAdapterName(text) {
            self = .kernel(text)
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let rest = String(text[text.index(after: colon)...])
        switch text[..<colon] {
        case "tcp":
            guard let split = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: split)...]), port > 0
            else { return nil }
            var host = String(rest[..<split])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { return nil }
            self = .tcp(host: host, port: port)
        case "unix":
            guard !rest.isEmpty else { return nil }
            self = .unix(path: rest)
        case "serial":
            guard !rest.isEmpty else { return nil }
            if let split = rest.lastIndex(of: ":") {
                guard let baud = Int(rest[rest.index(after: split)...]), Self.baudRates.contains(baud),
                    split != rest.startIndex
                else { return nil }
                self = .serial(device: String(rest[..<split]), baud: baud)
            } else {
                self = .serial(device: rest, baud: Self.defaultBaud)
            }
        default:
            return nil
        }
    }

    /// Whether `text` names a kernel adapter as `--adapter` and `--hci` take it: `hci` and ASCII digits. Only
    /// such a name becomes part of a D-Bus object path (`/org/bluez/hci0`) or reaches the kernel.
    public static func isAdapterName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count > 3 && bytes.starts(with: "hci".utf8) && bytes.dropFirst(3).allSatisfy { (0x30...0x39).contains($0) }
    }

    public var description: String {
        switch self {
        case .kernel(let adapter): Self.adapterName(adapter)
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        case .serial(let device, let baud): "serial:\(device):\(baud)"
        }
    }

    /// Opens the controller: the kernel adapter, or the stream with the bare controller set up.
    func open() throws(RadioError) -> any HCIChannel {
        if case .kernel(let adapter) = self { return try HCISocket(adapter: adapter) }
        return try H4Stream(self)
    }
}

/// A way to exchange HCI packets with one controller: commands out, events in.
protocol HCIChannel: AnyObject {
    /// The adapter's name or the transport's text, for messages.
    var adapter: String { get }
    /// Writes one command packet (without the H4 indicator).
    func write(command: HCICommand) throws(RadioError)
    /// The next event (bare: code, length, parameters), or nil when none came within the timeout
    /// (-1: wait forever) or `wakeup` became readable first.
    func readEvent(timeoutMilliseconds: Int32, wakeup: Int32?) throws(RadioError) -> [UInt8]?
}

extension HCIChannel {
    /// Sends `command` and waits for its Command Complete or Command Status: one command in flight.
    /// Returns the return parameters (starting with the status); throws when the status is not success.
    @discardableResult
    func send(_ command: HCICommand, timeoutMilliseconds: Int32 = 2000) throws(RadioError) -> [UInt8] {
        try write(command: command)
        let deadline = monotonicMilliseconds() + Int64(timeoutMilliseconds)
        while true {
            let remaining = deadline - monotonicMilliseconds()
            guard remaining > 0, let event = try readEvent(timeoutMilliseconds: Int32(remaining), wakeup: nil) else {
                throw .commandTimedOut(opcode: command.opcode)
            }
            guard let response = HCICommandResponse(event: event), response.opcode == command.opcode else { continue }
            guard response.status == 0 else { throw .commandFailed(opcode: command.opcode, status: response.status) }
            return response.returnParameters
        }
    }

    /// LE Read Local Supported Features.
    func readLEFeatures() throws(RadioError) -> LEFeatures {
        try LEFeatures(returnParameters: try send(.leReadLocalSupportedFeatures))
    }
}
