import Foundation
import LoyaltyClient
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-C, SIGTERM, SIGHUP and SIGQUIT (Ctrl-\), taken by dispatch sources (`SignalSources`).
///
/// The first signal asks the command to end: `isRequested` turns true, the `cancels` actions run (a radio
/// stops listening) and `sleep` and `waitForInput` return early. A second one ends the process at once
/// with 128 + the signal, after the `restores` actions (a terminal's settings), for a command stuck where
/// it cannot look. A signal the process was started ignoring (`nohup`) stays ignored.
public final class Interruption: @unchecked Sendable {  // its state is in the Mutex and the Atomic
    /// The process's: ending on any of these leaves the terminal and the radio as they were. (SIGQUIT would
    /// end the process without a word, its terminal raw.)
    public static let process = Interruption(signals: [SIGINT, SIGTERM, SIGHUP, SIGQUIT])

    private struct State {
        var signals = 0
        var cancels: [@Sendable () -> Void] = []
        var restores: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let requested = Atomic<Bool>(false)
    /// Readable once a signal came: wakes a thread blocked in `poll`.
    private let wakeup: (read: Int32, write: Int32)

    /// Takes `signals` from now on, for the life of the process.
    public init(signals: [Int32]) {
        // Without a pipe (out of descriptors) waits still end on a signal, at the next EINTR or timeout.
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 { for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) } }
        wakeup = (ends[0], ends[1])
        // A queue of its own (an overcommitting one) runs even while the shared pool's threads are all busy.
        SignalSources(signals, queue: DispatchQueue(label: "Interruption")).start { signalNumber, count in
            self.received(signalNumber, count: count)
        }
    }

    deinit {
        close(wakeup.read)
        close(wakeup.write)
    }

    /// Whether a signal asked the command to end.
    public var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Runs `cancel` when the command is first asked to end (at once if it already was): on the signal's
    /// dispatch queue, or on the thread that calls `request`.
    public func cancels(_ cancel: @escaping @Sendable () -> Void) {
        let already = state.withLock { state in
            state.cancels.append(cancel)
            return state.signals > 0
        }
        if already { cancel() }
    }

    /// Runs `restore` before a second signal ends the process (it may have run already: make it idempotent).
    public func restores(_ restore: @escaping @Sendable () -> Void) {
        state.withLock { $0.restores.append(restore) }
    }

    /// Sleeps `seconds`, or less if a signal comes; true if it slept the whole time.
    @discardableResult
    public func sleep(_ seconds: Double) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        while !isRequested {
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= deadline { return true }
            var polled = pollfd(fd: wakeup.read, events: Int16(POLLIN), revents: 0)
            _ = poll(&polled, 1, Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max))))
        }
        return false
    }

    /// Blocks until one of `descriptors` can be read (or is at its end); false if a signal came first.
    public func waitForInput(_ descriptors: Int32...) -> Bool {
        while !isRequested {
            var polled = (descriptors + [wakeup.read]).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&polled, nfds_t(polled.count), -1) < 0, errno != EINTR { return false }
            if polled.dropLast().contains(where: { $0.revents != 0 }) { return !isRequested }
        }
        return false
    }

    /// Asks the command to end as a first signal does (the shopper pressed q), with its summary; a signal
    /// after it ends the process at once.
    public func request() { arrive(count: 1, signal: nil) }

    private func received(_ signalNumber: Int32, count: Int) { arrive(count: count, signal: signalNumber) }

    private func arrive(count: Int, signal signalNumber: Int32?) {
        let (first, cancels, restores) = state.withLock { state in
            state.signals += max(count, 1)
            return (state.signals == max(count, 1), state.cancels, state.restores)
        }
        if first {
            // Requested before the radio stops: a scan that ends because of the cancel sees why it ended.
            requested.store(true, ordering: .releasing)
            for cancel in cancels { cancel() }
            var byte: UInt8 = 1
            _ = write(wakeup.write, &byte, 1)
        }
        if let signalNumber, !first || count > 1 {
            for restore in restores { restore() }
            _exit(128 + signalNumber)
        }
    }
}
