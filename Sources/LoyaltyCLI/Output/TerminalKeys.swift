import Foundation
import LoyaltyClient
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the shopper did at the terminal.
public enum TerminalInput: Equatable, Sendable {
    /// A key pressed.
    case key(UInt8)
    /// The command was stopped (Ctrl-Z) and continued (`fg`): what it drew is no longer just above the cursor.
    case resumed
    /// The descriptor `waitForKey(orReadable:)` was given can be read (the session bus: a notification's answer).
    case readable
}

/// Where a scan on a terminal gets the shopper's keys: the terminal itself, or a script in tests.
public protocol ShopperKeys: AnyObject, Sendable {
    /// A key pressed since the last call, if any; never waits.
    func poll() -> TerminalInput?
    /// The next key, or `.readable` when `descriptor` (if not -1) can be read first; nil when there will be no
    /// key (standard input ended, a signal).
    func waitForKey(orReadable descriptor: Int32) -> TerminalInput?
    /// Gives the terminal back as it was.
    func restore()
}

/// Single keys from the terminal on standard input, without echo or Enter. `restore` puts the terminal
/// back as it was; a second signal, which ends the process at once, does so too. Ctrl-Z gives the shell
/// its terminal as it was before stopping, and `fg` takes single keys again (the shell put its own
/// settings back meanwhile).
public final class TerminalKeys: ShopperKeys {
    private let original: termios
    private let raw: termios
    private let interruption: Interruption
    /// Whether the keys are still taken (until `restore`): a continue must not take them back after it.
    private let taken = Mutex(true)
    private let resumed = Atomic<Bool>(false)
    /// Readable after a continue: wakes `waitForKey`.
    private let resumption: (read: Int32, write: Int32)

    /// Nil when standard input is not a terminal.
    public init?(interruption: Interruption) {
        var original = termios()
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &original) == 0 else { return nil }
        self.original = original
        self.interruption = interruption
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        self.raw = raw
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        }
        resumption = (ends[0], ends[1])
        interruption.restores { [original] in Self.set(original) }
        Self.set(raw)
        SignalSources([SIGTSTP, SIGCONT], queue: DispatchQueue(label: "TerminalKeys")).start { signal, _ in
            signal == SIGTSTP ? self.stop() : self.continued()
        }
    }

    /// A key pressed since the last call, if any; `.resumed` first after a continue.
    public func poll() -> TerminalInput? {
        if takeResumed() { return .resumed }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? .key(byte) : nil
    }

    /// Blocks until a key is pressed, `descriptor` can be read or the command is continued after a stop; nil
    /// when a signal asks the command to end or the terminal is gone.
    public func waitForKey(orReadable descriptor: Int32) -> TerminalInput? {
        // poll skips a negative descriptor.
        while interruption.waitForInput(STDIN_FILENO, resumption.read, descriptor) {
            if takeResumed() { return .resumed }
            var input = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&input, 1, 0) > 0 else {
                var other = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if Glibc.poll(&other, 1, 0) > 0 { return .readable }
                drainResumption()  // the wake-up of a continue already taken
                continue
            }
            var byte: UInt8 = 0
            switch read(STDIN_FILENO, &byte, 1) {
            case 1: return .key(byte)
            case 0: return nil  // readable with nothing to read: hung up
            default: if errno != EINTR && errno != EAGAIN { return nil }
            }
        }
        return nil
    }

    public func restore() {
        taken.withLock { taken in
            taken = false
            Self.set(original)
        }
    }

    /// Ctrl-Z: the terminal as it was, then the stop that SIGTSTP's default action would have been.
    private func stop() {
        taken.withLock { if $0 { Self.set(original) } }
        raise(SIGSTOP)
    }

    /// Continued (`fg`): single keys again, unless continued in the background (`bg`), where setting the
    /// terminal would stop the process again (SIGTTOU); `fg` continues it once more.
    private func continued() {
        let foreground = tcgetpgrp(STDIN_FILENO)
        // -1: not our controlling terminal, so no job control to respect.
        guard foreground == -1 || foreground == getpgrp() else { return }
        taken.withLock { if $0 { Self.set(raw) } }
        resumed.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(resumption.write, &byte, 1)
    }

    private func takeResumed() -> Bool {
        guard resumed.exchange(false, ordering: .acquiringAndReleasing) else { return false }
        drainResumption()
        return true
    }

    private func drainResumption() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(resumption.read, &bytes, bytes.count) > 0 {}
    }

    private static func set(_ settings: termios) {
        var settings = settings
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }
}
