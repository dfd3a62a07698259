import Foundation
import Synchronization
import Testing

@testable import LoyaltyCLI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// A signal taken by `Interruption` runs the cancel actions off the signal handler, marks the command as
/// asked to end and wakes a thread waiting on input or sleeping. (SIGUSR1 here: the test process's own
/// Ctrl-C stays as it was.)
@Suite struct InterruptionTests {
    @Test func aSignalCancelsAndWakesWhatWaits() throws {
        let interruption = Interruption(signals: [SIGUSR1])
        let cancelled = Mutex(0)
        interruption.cancels { cancelled.withLock { $0 += 1 } }
        #expect(!interruption.isRequested)
        #expect(interruption.sleep(0.01), "no signal: it sleeps the whole time")

        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let started = Date()
        Thread {
            usleep(200_000)
            kill(getpid(), SIGUSR1)
        }.start()
        // Nothing is ever written to the pipe: only the signal ends the wait.
        #expect(!interruption.waitForInput(ends[0]))
        #expect(Date().timeIntervalSince(started) < 60, "a hang fails")
        #expect(interruption.isRequested)
        #expect(!interruption.sleep(30), "a sleep after the signal returns at once")
        #expect(cancelled.withLock { $0 } == 1)
        // Registered after the signal: runs at once.
        interruption.cancels { cancelled.withLock { $0 += 1 } }
        #expect(cancelled.withLock { $0 } == 2)
    }

    /// The shopper's q: the same as a first signal, without one.
    @Test func aRequestCancelsAndWakesAsAFirstSignalDoes() throws {
        let interruption = Interruption(signals: [])
        let cancelled = Mutex(0)
        interruption.cancels { cancelled.withLock { $0 += 1 } }
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        Thread {
            usleep(200_000)
            interruption.request()
        }.start()
        #expect(!interruption.waitForInput(ends[0]))
        #expect(interruption.isRequested)
        #expect(!interruption.sleep(30))
        #expect(cancelled.withLock { $0 } == 1)
    }
}
