import BeaconRadio
import DBus
import Foundation
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// `loyalty doctor`'s checks beyond the radio: what `scan --notify` finds on the session bus, and what the scan
/// as a systemd user service (loyalty-scan) has to reach the radio, and whether the service secure beacons resolve
/// through answers. Advice, not a verdict on beacon
/// monitoring: neither changes doctor's exit status.
enum DesktopDiagnosis {
    static func checks(radio: RadioDiagnosis) -> [RadioDiagnosis.Check] {
        [notifications(), userService(radio: radio), secureBeacons()]
    }

    /// Secure beacons resolve only through the service: whether the server this device uses (LOYALTY_SERVER, the
    /// config, the default) answers now.
    static func secureBeacons() -> RadioDiagnosis.Check {
        let name = "secure-beacons"
        let queued = "until then, what a scan hears of them is queued and sent at the next loyalty sync"
        do {
            let environment = CommandScope.environment
            let config = try ClientHome(environment: environment).loadConfig()
            let server = try config.serverURL(
                flag: nil, environment: environment, plainHTTPAllowed: environment["LOYALTY_INSECURE_HTTP"] == "1")
            let api = LoyaltyAPIClient(
                server: server, timeouts: Timeouts(connect: 3, total: 5),
                caFile: try config.caFile(flag: nil, environment: environment))
            do {
                try api.checkHealth()
                return .init(
                    name: name, status: .ok,
                    detail: "the service at \(TerminalText.escaped(server.absoluteString)) answers: a scan resolves secure "
                        + "beacons (identities that rotate, which only the service can map to their offers) as it hears them")
            } catch {
                return .init(
                    name: name, status: .warning,
                    detail: "secure beacons need the service reachable, and \(TerminalText.escaped(server.absoluteString)) "
                        + "does not answer: \(TerminalText.escaped(String(describing: error)))",
                    remedy: "check the network or --server/LOYALTY_SERVER; \(queued)")
            }
        } catch {
            return .init(
                name: name, status: .warning,
                detail: "secure beacons need the service reachable, and no server is set up: \(TerminalText.escaped(String(describing: error)))",
                remedy: "loyalty config set server URL; \(queued)")
        }
    }

    static func notifications() -> RadioDiagnosis.Check {
        let bus: MessageBus
        do { bus = try MessageBus.session() } catch {
            return .init(
                name: "notifications", status: .warning, detail: "no session bus: \(error.message)",
                remedy: "scan --notify posts to the session bus of a desktop login; without one the scan goes on without")
        }
        let service = DesktopNotifier.service
        do {
            let reply = try bus.call(
                destination: service, path: DesktopNotifier.objectPath, interface: service, method: "GetServerInformation",
                timeoutMilliseconds: 2000)
            let capabilities = try bus.call(
                destination: service, path: DesktopNotifier.objectPath, interface: service, method: "GetCapabilities",
                timeoutMilliseconds: 2000)
            let names: [String] = if case .array(let values)? = capabilities.first { values.compactMap(\.string) } else { [] }
            let server = TerminalText.escaped(reply.first?.string ?? "a notification server")
            let actions = names.contains("actions") ? "with Redeem and Dismiss buttons" : "without buttons (no actions)"
            return .init(
                name: "notifications", status: .ok, detail: "\(server) shows scan --notify's offers, \(actions)")
        } catch {
            return .init(
                name: "notifications", status: .warning,
                detail: "no notification server answers on the session bus: \(TerminalText.escaped(error.message))",
                remedy: "a desktop provides one, or start dunst; scan --notify goes on without")
        }
    }

    /// systemd --user cannot grant capabilities (AmbientCapabilities needs the system manager): a user service
    /// scans with the program's file capabilities (setcap), or through bluetoothd while it discovers, which its
    /// D-Bus policy allows to root and the `bluetooth` group (and, on Debian, everyone).
    static func userService(radio: RadioDiagnosis) -> RadioDiagnosis.Check {
        let underSystemd = ProcessInfo.processInfo.environment["INVOCATION_ID"] != nil
        let context = underSystemd ? "this systemd service" : "a systemd user service (loyalty-scan)"
        let group = isInBluetoothGroup ? "is in the `bluetooth` group" : "is not in the `bluetooth` group"
        guard radio.checks.contains(where: { $0.name == "capabilities" && $0.status == .ok }) else {
            return .init(
                name: "user-service", status: .warning,
                detail: "\(context) gets no capabilities from systemd --user, and this program has none; this user \(group)",
                remedy: "give the program CAP_NET_RAW and CAP_NET_ADMIN once: \(RadioError.setcapCommand) "
                    + "(beside a bluetoothd that is discovering, BlueZ's D-Bus policy is what counts: `bluetooth` group)")
        }
        return .init(
            name: "user-service", status: .ok,
            detail: "\(context) can scan with the program's CAP_NET_RAW and CAP_NET_ADMIN; this user \(group)")
    }

    private static var isInBluetoothGroup: Bool {
        guard let entry = getgrnam("bluetooth") else { return false }
        let wanted = entry.pointee.gr_gid
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        let found = getgroups(count, &groups)
        return getegid() == wanted || groups.prefix(Int(max(found, 0))).contains(wanted)
    }
}
