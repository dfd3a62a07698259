import Beacons

/// Live beacon advertising (iBeacon or Eddystone) on one controller (a kernel adapter, or a bare controller over an H4 stream): Core Location's peripheral data
/// advertised by CBPeripheralManager, for a Linux machine at the till.
///
/// `init` opens the adapter and reads its LE features; `run` programs the advertisement (extended commands
/// only when the controller supports LE Extended Advertising, else legacy), advertises until `cancel()` or
/// the end of its duration, then disables advertising. `run` must be called from one thread at a time;
/// `cancel` may be called from any thread (and from a signal handler), hence `@unchecked Sendable`.
public final class BeaconAdvertiser: @unchecked Sendable {
    public let adapter: String
    public let features: LEFeatures
    public let commands: LEAdvertisingCommands
    public let advertisement: BeaconAdvertisement
    private let socket: any HCIChannel
    private let wakeup: WakeupPipe

    /// Opens `transport` (the first kernel adapter by default) and reads its LE features.
    public init(transport: HCITransport = .kernel(nil), advertisement: BeaconAdvertisement) throws(RadioError) {
        let socket = try transport.open()
        features = try socket.readLEFeatures()
        commands = try LEAdvertisingCommands(features: features, advertisement: advertisement)
        self.advertisement = advertisement
        wakeup = try WakeupPipe()
        self.socket = socket
        self.adapter = socket.adapter
    }

    /// Advertises until `cancel()` is called or `duration` seconds have passed (nil: until cancelled), then
    /// disables advertising. Throws when advertising cannot be started, the socket fails, or the controller
    /// refuses to stop (the beacon would go on advertising: the caller must say so).
    public func run(duration: Double? = nil) throws(RadioError) {
        // Advertising left on (by a crashed run or another program) makes the parameters command fail.
        _ = try? socket.send(commands.disable)
        for command in commands.start { try socket.send(command) }
        let started = monotonicMilliseconds()
        func elapsed() -> Double { Double(monotonicMilliseconds() - started) / 1000 }
        var data = advertisement.advertisingData
        var failure: RadioError?
        do {
            try wakeup.waitOut(duration) { timeout throws(RadioError) in
                var wait = timeout
                // An Eddystone beacon's data changes on time (its EID's window turns, TLM takes its turn).
                let now = elapsed()
                if let next = advertisement.nextChange(after: now) {
                    let untilNext = Int32(clamping: Int64(((next - now) * 1000).rounded(.up)))
                    wait = timeout < 0 ? untilNext : min(timeout, untilNext)
                }
                // Events are drained, not used: a socket left unread would fill up and drop them.
                _ = try socket.readEvent(timeoutMilliseconds: wait, wakeup: wakeup.readEnd)
                let due = advertisement.advertisingData(elapsed: elapsed())
                if due != data {
                    try socket.send(commands.replacingData(due))
                    data = due
                }
            }
        } catch {
            failure = error
        }
        do { try socket.send(commands.disable) } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Stops `run` (from any thread); it returns after disabling advertising.
    public func cancel() { wakeup.signal() }
}
