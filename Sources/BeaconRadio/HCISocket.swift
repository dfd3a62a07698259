internal import CBlueZ
import Foundation

/// Whether the kernel offers Bluetooth sockets: nil when it does, else the errno of the refusal.
func bluetoothSocketRefusal() -> Int32? {
    let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
    guard fd >= 0 else { return errno }
    close(fd)
    return nil
}

/// A raw HCI socket bound to one adapter. Owns its descriptor; confined to one thread at a time.
final class HCISocket: HCIChannel {
    let descriptor: Int32
    let adapter: String

    /// Opens the adapter named `adapter` (`hci0`), or the first one when nil.
    init(adapter: String?) throws(RadioError) {
        let capabilities = ProcessCapabilities.current()
        if let refusal = bluetoothSocketRefusal() {
            throw RadioError(
                errno: refusal, call: "socket(AF_BLUETOOTH)", adapter: HCITransport.adapterName(adapter), capabilities: capabilities)
        }
        let deviceID: Int32
        if let adapter {
            deviceID = hci_devid(adapter)
            guard deviceID >= 0 else { throw .adapterNotFound(adapter) }
        } else {
            deviceID = hci_get_route(nil)
            guard deviceID >= 0 else { throw .noAdapter }
        }
        let name = adapter ?? "hci\(deviceID)"
        let fd = hci_open_dev(deviceID)
        guard fd >= 0 else {
            throw RadioError(errno: errno, call: "hci_open_dev", adapter: name, capabilities: capabilities)
        }
        descriptor = fd
        self.adapter = name
        // Only what scanning needs: command answers and LE meta events (advertising reports).
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(HCI_EVENT_PKT, &filter)
        hci_filter_set_event(EVT_CMD_COMPLETE, &filter)
        hci_filter_set_event(EVT_CMD_STATUS, &filter)
        hci_filter_set_event(EVT_LE_META_EVENT, &filter)
        // The whole struct with its tail padding (16 bytes, not the 14 of its fields): kernels with
        // copy_safe_from_sockptr refuse a shorter option with EINVAL.
        guard setsockopt(fd, Int32(SOL_HCI), HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.stride)) == 0 else {
            let error = RadioError(
                errno: errno, call: "setsockopt(HCI_FILTER)", adapter: name, capabilities: capabilities)
            hci_close_dev(fd)
            throw error
        }
    }

    deinit { hci_close_dev(descriptor) }

    func write(command: HCICommand) throws(RadioError) {
        let packet = [UInt8(HCI_COMMAND_PKT)] + command.packet
        let written = packet.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == packet.count else { throw failure(call: "write(HCI command)") }
    }

    func readEvent(timeoutMilliseconds: Int32, wakeup: Int32?) throws(RadioError) -> [UInt8]? {
        var polled = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if let wakeup { polled.append(pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&polled, nfds_t(polled.count), timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return nil }
            throw failure(call: "poll")
        }
        guard ready > 0, polled[0].revents != 0, polled.count == 1 || polled[1].revents == 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: Int(HCI_MAX_EVENT_SIZE) + 1)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else {
            if errno == EINTR || errno == EAGAIN { return nil }
            throw failure(call: "read(HCI event)")
        }
        // The socket prefixes each packet with its H4 type; the filter lets only events through.
        guard count >= 3, buffer[0] == UInt8(HCI_EVENT_PKT) else { return nil }
        return Array(buffer[1..<count])
    }

    private func failure(call: String) -> RadioError {
        RadioError(errno: errno, call: call, adapter: adapter, capabilities: ProcessCapabilities.current())
    }
}

/// Milliseconds on the monotonic clock, for command timeouts and advertising durations (never beacon time).
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

extension HCITransport {
    /// The kernel adapter `adapter` names, or when nil the one raw HCI opens (`hci_get_route`: the first that is
    /// up), so that bluetoothd's paths and raw HCI mean the same adapter; hci0 when the kernel has none.
    public static func adapterName(_ adapter: String?) -> String {
        if let adapter { return adapter }
        let deviceID = hci_get_route(nil)
        return deviceID >= 0 ? "hci\(deviceID)" : "hci0"
    }
}
