import Foundation
import SystemCalls

/// A Linux capability the radio needs.
public enum Capability: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Bringing the adapter up and controlling it.
    case netAdmin = 12
    /// Sending raw HCI commands (the scan commands) and reading raw events.
    case netRaw = 13

    public var description: String { self == .netAdmin ? "CAP_NET_ADMIN" : "CAP_NET_RAW" }
}

/// The capabilities this process may use (`CapEff` of `/proc/self/status`).
public struct ProcessCapabilities: Hashable, Sendable {
    public var effective: UInt64

    public init(effective: UInt64) { self.effective = effective }

    /// Reads the `CapEff:` line of a `/proc/<pid>/status` text; nil when there is none.
    public init?(procStatus: String) {
        for line in procStatus.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces)
            guard let value = UInt64(hex, radix: 16) else { return nil }
            effective = value
            return
        }
        return nil
    }

    /// This process's capabilities; nil when `/proc` cannot tell (not Linux, no procfs).
    public static func current() -> ProcessCapabilities? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return ProcessCapabilities(procStatus: status)
    }

    public func has(_ capability: Capability) -> Bool { effective & (1 << UInt64(capability.rawValue)) != 0 }

    /// Which of the radio's capabilities are missing, CAP_NET_RAW first.
    public var missingForRadio: [Capability] { [.netRaw, .netAdmin].filter { !has($0) } }
}

/// Why the radio cannot be used, in words that say what to do about it.
public enum RadioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `socket(AF_BLUETOOTH, ...)` failed with EAFNOSUPPORT.
    case bluetoothUnavailableInKernel
    /// No adapter at all (`hci_get_route` found none).
    case noAdapter
    /// `--adapter NAME` names no adapter.
    case adapterNotFound(String)
    /// EPERM/EACCES: the listed capabilities are missing (empty when the process seems to have them,
    /// as inside a container that forbids raw Bluetooth sockets).
    case missingCapabilities([Capability])
    /// ENETDOWN: the adapter exists but is powered off.
    case adapterDown(String)
    /// ERFKILL: a radio kill switch blocks the adapter.
    case adapterBlocked(String)
    /// EBUSY: another program holds the adapter exclusively.
    case adapterBusy(String)
    /// The controller refused a command (an HCI error code, Vol 1 Part F).
    case commandFailed(opcode: UInt16, status: UInt8)
    /// The controller did not answer a command in time.
    case commandTimedOut(opcode: UInt16)
    /// The controller's answer to a command was too short.
    case malformedResponse(opcode: UInt16)
    case invalidScanParameters(String)
    case invalidAdvertisingParameters(String)
    /// Any other failing system call.
    case system(call: String, errno: Int32)
    /// `--hci` names a stream that cannot be opened (connection refused, no such device).
    case transportUnreachable(String, detail: String)
    /// The stream to the controller ended or broke.
    case transportClosed(String, detail: String)
    /// An unknown H4 packet indicator: the stream is not H4, or bytes were lost.
    case framingLost(String, indicator: UInt8)
    /// bluetoothd refused or failed a request for the adapter (its D-Bus error).
    case bluez(String, String)
    /// Advertising through bluetoothd failed: the adapter, the D-Bus error's name and its message.
    case bluezAdvertising(String, String, String)
    /// bluetoothd withdrew our advertisement (Release): the adapter went away or bluetoothd is stopping.
    case advertisementReleased(String)
    /// bluetoothd runs, but the system bus's policy keeps this user from it (AccessDenied).
    case busRefusesUser(String)
    /// bluetoothd manages the adapter, and a beacon whose data changes (Eddystone, a secure iBeacon) is advertised
    /// over raw HCI only.
    case changingDataThroughBluetoothd(String)

    /// The line that grants the capabilities to the installed binary.
    public static let setcapCommand = "sudo setcap 'cap_net_raw,cap_net_admin+ep' \"$(command -v loyalty)\""

    /// Maps the `errno` of a failed `call` on `adapter` to what it means for the user.
    public init(errno code: Int32, call: String, adapter: String, capabilities: ProcessCapabilities?) {
        switch code {
        case EAFNOSUPPORT: self = .bluetoothUnavailableInKernel
        case EPERM, EACCES: self = .missingCapabilities(capabilities?.missingForRadio ?? Capability.allCases)
        case ENODEV: self = .adapterNotFound(adapter)
        case ENETDOWN: self = .adapterDown(adapter)
        case ERFKILL: self = .adapterBlocked(adapter)
        case EBUSY: self = .adapterBusy(adapter)
        default: self = .system(call: call, errno: code)
        }
    }

    public var description: String {
        let replay = "`loyalty scan --replay FILE` works without a radio"
        switch self {
        case .bluetoothUnavailableInKernel:
            return "Bluetooth is not available in this kernel (no AF_BLUETOOTH sockets): load it with "
                + "`sudo modprobe bluetooth` or use a kernel built with Bluetooth; meanwhile \(replay)"
        case .noAdapter:
            return "no Bluetooth adapter found: plug one in (or pass it through to this machine); meanwhile \(replay)"
        case .adapterNotFound(let name):
            return "no Bluetooth adapter named \(name): `loyalty doctor` lists the adapters; meanwhile \(replay)"
        case .missingCapabilities(let missing):
            let needed = "scanning and advertising need CAP_NET_RAW and CAP_NET_ADMIN"
            let which =
                missing.isEmpty
                ? "the system refused raw Bluetooth access although the capabilities look present (a container or security policy?)"
                : "this process lacks \(missing.map(\.description).joined(separator: " and "))"
            return "\(needed); \(which). Grant them with: \(Self.setcapCommand)"
        case .adapterDown(let name):
            return
                "Bluetooth adapter \(name) is down: power it on with `bluetoothctl power on` or `sudo hciconfig \(name) up`"
        case .adapterBlocked(let name):
            return "Bluetooth adapter \(name) is blocked by a radio kill switch: `rfkill unblock bluetooth`"
        case .adapterBusy(let name):
            return "Bluetooth adapter \(name) is busy (another program holds it): stop that program and retry"
        case .commandFailed(let opcode, let status):
            return "the Bluetooth controller refused command \(hex(opcode)) with HCI error \(hex(UInt16(status))): "
                + "another program may be scanning or advertising with it; stop it or retry"
        case .commandTimedOut(let opcode):
            return
                "the Bluetooth controller did not answer command \(hex(opcode)): reset the adapter (`sudo hciconfig hci0 reset`) and retry"
        case .malformedResponse(let opcode):
            return "the Bluetooth controller answered command \(hex(opcode)) with too few bytes: try another adapter"
        case .invalidScanParameters(let detail):
            return "invalid scan parameters: \(detail)"
        case .changingDataThroughBluetoothd(let name):
            return "bluetoothd manages \(name), and Eddystone and secure beacons are advertised over raw HCI only (an "
                + "advertisement registered with bluetoothd keeps its data, where EID and TLM change it): stop bluetoothd "
                + "(`sudo systemctl stop bluetooth`) or name a controller with --hci"
        case .invalidAdvertisingParameters(let detail):
            return "invalid advertising parameters: \(detail)"
        case .system(let call, let code):
            return "\(call) failed: \(errorText(code)) (errno \(code))"
        case .transportUnreachable(let name, let detail):
            return "cannot open the HCI transport \(name): \(detail); is the controller (or emulator) running there?"
        case .transportClosed(let name, let detail):
            return "the HCI transport \(name) went away: \(detail)"
        case .framingLost(let name, let indicator):
            return "the HCI transport \(name) sent an unknown H4 packet indicator \(hex(UInt16(indicator))): "
                + "it does not speak H4 (or bytes were lost, e.g. a wrong baud rate)"
        case .bluez(let name, let detail):
            return "bluetoothd could not scan with \(name): \(detail) (`bluetoothctl show` says its state)"
        case .bluezAdvertising(let name, "org.bluez.Error.NotPermitted", let message):
            return "bluetoothd has no free advertising instance on \(name) (\(message)): other programs hold them all; "
                + "end one (`bluetoothctl advertise off` ends bluetoothctl's) and retry"
        case .busRefusesUser(let message):
            return "the system bus does not let this user reach bluetoothd (\(message)), and going around it over raw "
                + "HCI would undo its scanning or advertising: run as root or as a member of the `bluetooth` group "
                + "(/etc/dbus-1/system.d/bluetooth.conf)"
        case .bluezAdvertising(let name, let error, let message):
            return "bluetoothd could not advertise on \(name): \(error): \(message) (`bluetoothctl show` says its state)"
        case .advertisementReleased(let name):
            return "bluetoothd withdrew the advertisement on \(name): the adapter went away, or bluetoothd is stopping"
        }
    }
}

private func hex(_ value: UInt16) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
