import Beacons

/// The ticks a live scan makes between events, so time advances in a quiet room: how long to wait for
/// the next event, and the tick when one is due. It also notices a resume from suspend: the clock's
/// `sleptSeconds` grew since it last looked.
struct ScanTicker {
    private let interval: Double?
    private var next: Double?
    private var slept: Double

    /// A sleep shorter than this is clock noise, not a suspend.
    static let shortestSleep = 0.5

    /// No ticks when `interval` is nil.
    init(interval: Double?, clock: any BeaconClock) {
        self.interval = interval
        next = interval.map { clock.now() + $0 }
        slept = clock.sleptSeconds
    }

    /// Milliseconds to wait for an event before the next tick is due (-1: forever).
    func waitMilliseconds(clock: any BeaconClock) -> Int32 {
        guard let next else { return -1 }
        return Int32(max(0, min((next - clock.now()) * 1000, 60_000)).rounded(.up))
    }

    /// A tick this close to due is due: a wait can end a hair before the clock says so (a coarse clock source, as in
    /// an emulated guest), and waiting again for the rest would be a wake-up of its own.
    static let earlyTolerance = 0.005

    /// Calls `onTick` with the time when a tick is due.
    mutating func tickIfDue(clock: any BeaconClock, _ onTick: (Double) -> Void) {
        guard let due = next, let interval else { return }
        let now = clock.now()
        guard now + Self.earlyTolerance >= due else { return }
        onTick(now)
        next = max(due + interval, now)
    }

    /// The seconds the machine was suspended since the last call, when it was (else nil).
    mutating func sleepEnded(clock: any BeaconClock) -> Double? {
        let total = clock.sleptSeconds
        defer { slept = total }
        return total - slept >= Self.shortestSleep ? total - slept : nil
    }
}
