import Foundation
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// Signals taken by dispatch sources rather than signal handlers, so that what they do is ordinary code on
/// a dispatch queue (a handler may call nothing but async-signal-safe functions). Taken for the life of the
/// process; a signal the process was started ignoring (`nohup`) stays ignored and is not taken.
struct SignalSources: @unchecked Sendable {  // the sources are touched only while starting
    /// The signals taken: those asked for that the process was not started ignoring.
    let signals: [Int32]
    private let sources: [any DispatchSourceSignal]

    /// Makes the sources on `queue`; the signals are ignored until `start` registers them.
    init(_ signals: [Int32], queue: DispatchQueue) {
        func handler(_ signalNumber: Int32) -> Int {
            var current = sigaction()
            sigaction(signalNumber, nil, &current)
            return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
        }
        self.signals = signals.filter { handler($0) != unsafeBitCast(SIG_IGN, to: Int.self) }
        // Only from the default action: dispatch installs its handler once per signal, and would not put it back.
        for signalNumber in self.signals where handler(signalNumber) == unsafeBitCast(SIG_DFL, to: Int.self) {
            signal(signalNumber, SIG_IGN)
        }
        sources = self.signals.map { DispatchSource.makeSignalSource(signal: $0, queue: queue) }
    }

    /// Runs `received` with each signal and how many came since the last call; the sources hold it for the
    /// life of the process.
    func start(_ received: @escaping @Sendable (_ signal: Int32, _ count: Int) -> Void) {
        // Once registered, dispatch's handler replaces SIG_IGN: wait for that (briefly), so that what comes
        // after is not ignored.
        let registered = DispatchGroup()
        for (source, signalNumber) in zip(sources, signals) {
            source.setEventHandler { received(signalNumber, Int(source.data)) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
        }
        _ = registered.wait(timeout: .now() + 1)
        // A parent may start us with them blocked (Foundation's Process passes on its threads' mask).
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signalNumber in signals { sigaddset(&blocked, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &blocked, nil)
    }
}
