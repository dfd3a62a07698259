import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A process on this machine as a claim on an offer names it (`OfferCache.claimShown`): the boot, the process
/// id and the process's start time, so that a later process given the same id, or any process after a
/// reboot, is not taken for the one that claimed.
public struct ProcessIdentity: Sendable, Equatable {
    /// "BOOT-ID PID START-TIME", as the cache keeps it.
    let text: String

    init(text: String) { self.text = text }

    /// This process.
    public static let current = ProcessIdentity(of: getpid())

    /// Process `pid` as it runs now ("?" for what /proc does not say).
    init(of pid: pid_t) {
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? "?"
        let started = Self.status(of: pid)?.started ?? "?"
        text = "\(boot.trimmingCharacters(in: .whitespacesAndNewlines)) \(pid) \(started)"
    }

    /// Whether the process still runs: its id names the same process (same boot, same start), not a zombie
    /// (killed, not yet reaped by its parent).
    var isRunning: Bool {
        let fields = text.split(separator: " ")
        guard fields.count == 3, let pid = pid_t(fields[1]) else { return false }
        return Self.status(of: pid)?.state != "Z" && ProcessIdentity(of: pid) == self
    }

    /// The state and start time (fields 3 and 22) of /proc/PID/stat; the command's name, field 2, is in
    /// parentheses and may hold spaces, so the fields are counted after its closing one.
    private static func status(of pid: pid_t) -> (state: Substring, started: Substring)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let name = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: name)...].split(separator: " ")
        return fields.count > 19 ? (fields[0], fields[19]) : nil
    }
}
