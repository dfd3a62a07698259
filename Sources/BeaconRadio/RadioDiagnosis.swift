import Beacons
internal import CBlueZ
import Foundation

/// What this machine can do with Bluetooth, line by line, each with what to do about it: Core
/// Location's `isMonitoringAvailable` / `isRangingAvailable` for Linux (`loyalty doctor`).
public struct RadioDiagnosis: Hashable, Sendable {
    public struct Check: Hashable, Sendable {
        public enum Status: String, Hashable, Sendable {
            case ok, warning, failed
            /// Not checked because an earlier check failed.
            case skipped
        }

        /// What was checked: "kernel", "adapter", "capabilities", "le-features".
        public var name: String
        public var status: Status
        /// What was found.
        public var detail: String
        /// What to do about it; nil when nothing needs doing.
        public var remedy: String?

        public init(name: String, status: Status, detail: String, remedy: String? = nil) {
            self.name = name
            self.status = status
            self.detail = detail
            self.remedy = remedy
        }
    }

    public var checks: [Check]

    /// Region monitoring and ranging both need a live scan: every radio check passed.
    public var isMonitoringAvailable: Bool { checks.allSatisfy { $0.status == .ok } }
    public var isRangingAvailable: Bool { isMonitoringAvailable }

    public init(checks: [Check]) { self.checks = checks }

    /// Examines the kernel, the adapters (or the one named), the capabilities and the LE features; for
    /// an H4 stream, the stream and the controller's LE features.
    public static func examine(transport: HCITransport = .kernel(nil)) -> RadioDiagnosis {
        guard case .kernel(let adapter) = transport else { return examineStream(transport) }
        var checks: [Check] = []
        let capabilities = ProcessCapabilities.current()
        let kernelOK = checkKernel(into: &checks)
        let chosen = kernelOK ? checkAdapters(named: adapter, into: &checks) : nil
        if !kernelOK {
            checks.append(Check(name: "adapter", status: .skipped, detail: "needs kernel Bluetooth support"))
        }
        let capabilitiesOK = checkCapabilities(capabilities, into: &checks)
        if let chosen, capabilitiesOK {
            checkFeatures(adapter: chosen, into: &checks)
        } else {
            checks.append(
                Check(name: "le-features", status: .skipped, detail: "needs a powered adapter and the capabilities"))
        }
        if kernelOK { checks += [scanPath(adapter: adapter), advertisePath(adapter: adapter)] }
        return RadioDiagnosis(checks: checks)
    }

    private static func examineStream(_ transport: HCITransport) -> RadioDiagnosis {
        var checks: [Check] = []
        do throws(RadioError) {
            let channel = try transport.open()
            checks.append(
                Check(
                    name: "transport", status: .ok,
                    detail: "\(transport) answers as a bare controller (set up with Reset and the event masks)"))
            checkFeatures(of: channel, into: &checks)
        } catch {
            checks.append(
                Check(
                    name: "transport", status: .failed, detail: "cannot use the controller at \(transport)",
                    remedy: error.description))
            checks.append(Check(name: "le-features", status: .skipped, detail: "needs a working transport"))
        }
        checks.append(
            Check(
                name: "scan-path", status: .ok,
                detail: "a scan programs the controller at \(transport) over H4 (no kernel Bluetooth, no bluetoothd)"))
        checks.append(
            Check(name: "advertise-path", status: .ok, detail: "advertising programs the controller at \(transport) over H4"))
        return RadioDiagnosis(checks: checks)
    }

    /// Which path a live scan takes, and why.
    private static func scanPath(adapter: String?) -> Check {
        let discovers: Bool
        do throws(RadioError) { discovers = try scansThroughBluetoothd(transport: .kernel(adapter)) } catch {
            return Check(
                name: "scan-path", status: .warning,
                detail: "bluetoothd runs but refuses this user: a scan cannot tell whether it is discovering, and ends",
                remedy: error.description)
        }
        let detail =
            if discovers, BlueZScanner.bluetoothdOffersAdvertisementMonitors(adapter: adapter) {
                "bluetoothd is discovering: a scan registers an advertisement monitor with it through D-Bus (AdvertisementMonitorManager1, patterns for iBeacon and Eddystone) and leaves its discovery alone; readings come as bluetoothd reports the monitor's matches"
            } else if discovers {
                "bluetoothd is discovering: a scan joins its discovery through D-Bus (SetDiscoveryFilter, StartDiscovery) and leaves it running; readings come as its discovery delivers them"
            } else if BlueZScanner.bluetoothdRuns() {
                "bluetoothd runs but is not discovering: a scan programs the controller over raw HCI (every advertisement) and leaves it as found"
            } else {
                "no bluetoothd on the system bus: a scan programs the controller over raw HCI and leaves it as found"
            }
        return Check(name: "scan-path", status: .ok, detail: detail)
    }

    /// What the scan's radio costs on the path it takes (`scanPath`): the duty cycle `power` asks for, and what is
    /// missing where that path cannot give it.
    public static func scanPower(_ power: ScanPower, transport: HCITransport) -> Check {
        let asked = "--power \(power.rawValue): \(power.summary)"
        guard case .kernel(let adapter) = transport, (try? scansThroughBluetoothd(transport: transport)) == true else {
            let path = if case .kernel = transport { "raw HCI" } else { "H4 (\(transport))" }
            return Check(
                name: "scan-power", status: .ok,
                detail: "\(asked), programmed with LE Set Scan Parameters (or the extended command) over \(path)")
        }
        guard BlueZScanner.bluetoothdOffersAdvertisementMonitors(adapter: adapter) else {
            // Ok all the same: monitoring and ranging work, at a cost the detail states.
            return Check(
                name: "scan-power", status: .ok,
                detail: "\(asked); but through bluetoothd's discovery the scan listens as that discovery does (active: scan "
                    + "requests to every advertiser, bluetoothd's own duty cycle; BlueZ's discovery filter has no passive "
                    + "setting), and keeps discovering after the other program stops",
                remedy: "run bluetoothd -E (--experimental) to let the scan use an advertisement monitor, which listens "
                    + "passively; or stop the other program's discovery so the scan takes the raw path")
        }
        return monitorScanPower(power, asked: asked)
    }

    /// The scan-power line of the advertisement monitor path: the kernel's passive scan for monitors, main.conf's.
    static func monitorScanPower(
        _ power: ScanPower, asked: String, mainConfiguration: String? = try? String(
            contentsOfFile: BlueZMonitorApplication.mainConfiguration, encoding: .utf8)
    ) -> Check {
        let parameters = BlueZMonitorApplication.scanParameters(mainConfiguration: mainConfiguration)
        let filter =
            BlueZMonitorApplication.rssiFilter(power).map {
                "bluetoothd reports a beacon when found and lost (after \($0.lowTimeout) s of silence)"
            } ?? "bluetoothd reports every matching advertisement"
        let detail =
            "\(asked); through bluetoothd's advertisement monitor the kernel listens passively (no scan requests) "
            + "\(parameters.summary) for every monitoring program, and \(filter); while another program discovers, "
            + "the controller scans actively for it"
        let matches = power != .high && parameters.interval == power.interval && parameters.window == power.window
        guard power != .high, !matches else { return Check(name: "scan-power", status: .ok, detail: detail) }
        return Check(
            name: "scan-power", status: .ok, detail: detail,
            remedy: "for the profile's duty cycle set ScanIntervalAdvMonitor=\(power.interval) and ScanWindowAdvMonitor="
                + "\(power.window) under [LE] in \(BlueZMonitorApplication.mainConfiguration) and restart bluetoothd")
    }

    /// Which path `beacon advertise` takes, and why.
    private static func advertisePath(adapter: String?) -> Check {
        let name = HCITransport.adapterName(adapter)
        let managed: (active: Int, free: Int)?
        do throws(RadioError) { managed = try BlueZAdvertiser.bluetoothdManages(adapter: adapter) } catch {
            return Check(
                name: "advertise-path", status: .warning, detail: "bluetoothd manages \(name) but refuses this user",
                remedy: error.description)
        }
        let detail =
            if let instances = managed {
                "bluetoothd manages \(name): advertising registers with its LEAdvertisingManager1 beside other programs' "
                    + "advertisements (\(instances.active) registered, \(instances.free) free) and leaves them on"
            } else {
                "no bluetoothd manages \(name): advertising programs the controller over raw HCI and disables it after"
            }
        return Check(name: "advertise-path", status: .ok, detail: detail)
    }

    private static func checkKernel(into checks: inout [Check]) -> Bool {
        guard let refusal = bluetoothSocketRefusal() else {
            checks.append(
                Check(name: "kernel", status: .ok, detail: "the kernel supports Bluetooth sockets (AF_BLUETOOTH)"))
            return true
        }
        let error = RadioError(errno: refusal, call: "socket(AF_BLUETOOTH)", adapter: "hci0", capabilities: nil)
        if error == .bluetoothUnavailableInKernel {
            checks.append(
                Check(
                    name: "kernel", status: .failed, detail: "this kernel has no Bluetooth sockets (AF_BLUETOOTH)",
                    remedy:
                        "load Bluetooth with `sudo modprobe bluetooth` or use a kernel built with it; `loyalty scan --replay FILE` works meanwhile"
                ))
        } else {
            checks.append(
                Check(name: "kernel", status: .failed, detail: "Bluetooth sockets refused", remedy: error.description))
        }
        return false
    }

    /// Lists the adapters; returns the name of the one scanning would use when it is up.
    private static func checkAdapters(named wanted: String?, into checks: inout [Check]) -> String? {
        let present = adapterNames()
        guard !present.isEmpty else {
            checks.append(
                Check(
                    name: "adapter", status: .failed, detail: "no Bluetooth adapter found",
                    remedy:
                        "plug in a Bluetooth adapter (or pass one through to this machine); `loyalty scan --replay FILE` works meanwhile"
                ))
            return nil
        }
        let states = present.map { name in (name, adapterState(name)) }
        let listing = states.map { "\($0.0) (\($0.1 ?? "state unknown"))" }.joined(separator: ", ")
        let name = wanted ?? present[0]
        guard present.contains(name) else {
            checks.append(
                Check(
                    name: "adapter", status: .failed, detail: "no adapter named \(name); found \(listing)",
                    remedy: "pass one of them with --adapter"))
            return nil
        }
        guard let state = adapterState(name), state.hasPrefix("up") else {
            checks.append(
                Check(
                    name: "adapter", status: .failed, detail: "found \(listing); \(name) is not up",
                    remedy: RadioError.adapterDown(name).description))
            return nil
        }
        checks.append(Check(name: "adapter", status: .ok, detail: "found \(listing); scanning uses \(name)"))
        return name
    }

    private static func checkCapabilities(_ capabilities: ProcessCapabilities?, into checks: inout [Check]) -> Bool {
        guard let capabilities else {
            checks.append(
                Check(
                    name: "capabilities", status: .warning, detail: "cannot read CapEff from /proc/self/status",
                    remedy: "scanning needs CAP_NET_RAW and CAP_NET_ADMIN: \(RadioError.setcapCommand)"))
            return false
        }
        let missing = capabilities.missingForRadio
        guard missing.isEmpty else {
            checks.append(
                Check(
                    name: "capabilities", status: .failed,
                    detail: "missing \(missing.map(\.description).joined(separator: " and "))",
                    remedy: RadioError.missingCapabilities(missing).description))
            return false
        }
        checks.append(Check(name: "capabilities", status: .ok, detail: "CAP_NET_RAW and CAP_NET_ADMIN are effective"))
        return true
    }

    private static func checkFeatures(adapter: String, into checks: inout [Check]) {
        do throws(RadioError) {
            checkFeatures(of: try HCISocket(adapter: adapter), into: &checks)
        } catch {
            checks.append(
                Check(
                    name: "le-features", status: .failed, detail: "cannot open \(adapter)", remedy: error.description))
        }
    }

    private static func checkFeatures(of channel: any HCIChannel, into checks: inout [Check]) {
        do throws(RadioError) {
            let features = try channel.readLEFeatures()
            let mode =
                features.contains(.extendedAdvertising)
                ? "LE Extended Advertising supported: scanning uses the extended commands"
                : "no LE Extended Advertising: scanning uses the legacy commands"
            checks.append(
                Check(
                    name: "le-features", status: .ok,
                    detail: "features 0x\(String(features.rawValue, radix: 16, uppercase: true)); \(mode)"))
        } catch {
            checks.append(
                Check(
                    name: "le-features", status: .failed, detail: "cannot read the LE features of \(channel.adapter)",
                    remedy: error.description))
        }
    }

    /// `hciN` entries of /sys/class/bluetooth, in numeric order (connections there carry a colon).
    private static func adapterNames() -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? []
        return entries.compactMap { name -> (String, Int)? in
            guard name.hasPrefix("hci"), let number = Int(name.dropFirst(3)) else { return nil }
            return (name, number)
        }.sorted { $0.1 < $1.1 }.map(\.0)
    }

    /// "up, AA:BB:..." or "down, ..."; nil when the kernel does not know the adapter.
    private static func adapterState(_ name: String) -> String? {
        let id = hci_devid(name)
        guard id >= 0 else { return nil }
        var info = hci_dev_info()
        guard hci_devinfo(id, &info) == 0 else { return nil }
        let up = hci_test_bit(Int32(HCI_UP), &info.flags) != 0
        return "\(up ? "up" : "down"), \(BluetoothAddress(wire: info.bdaddr.b))"
    }
}
