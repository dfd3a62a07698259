import Foundation

/// Wakes a thread blocked in `poll` on its read end: `signal()` may be called from any thread, and from a
/// signal handler (it is one `write`). Once signalled it stays readable.
final class WakeupPipe: @unchecked Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(RadioError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .system(call: "pipe", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    var isSignalled: Bool {
        var polled = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        return poll(&polled, 1, 0) > 0
    }

    /// Blocks for `milliseconds` or until signalled, whichever comes first.
    func sleep(milliseconds: Int32) {
        var polled = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        _ = poll(&polled, 1, milliseconds)
    }

    /// Calls `wait` with the milliseconds left (-1: no limit) until signalled or `duration` seconds (nil: no
    /// limit) have passed; `wait` blocks at most that long, returning early when `readEnd` becomes readable.
    func waitOut(_ duration: Double?, _ wait: (Int32) throws(RadioError) -> Void) throws(RadioError) {
        let deadline = duration.map { monotonicMilliseconds() + Int64(($0 * 1000).rounded()) }
        while !isSignalled {
            var timeout: Int32 = -1
            if let deadline {
                let remaining = deadline - monotonicMilliseconds()
                if remaining <= 0 { return }
                timeout = Int32(clamping: remaining)
            }
            try wait(timeout)
        }
    }
}
