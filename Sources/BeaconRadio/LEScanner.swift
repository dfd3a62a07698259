import Beacons
internal import CBlueZ
import Foundation

/// One HCI event from the controller: bare (event code, parameter length, parameters, no H4 type
/// byte), stamped with the injected clock when it was read. The Beacons HCI parser reads it.
public struct HCIEventPacket: Hashable, Sendable {
    public var bytes: [UInt8]
    public var time: Double

    public init(bytes: [UInt8], time: Double) {
        self.bytes = bytes
        self.time = time
    }
}

/// Live LE scanning on one controller: a kernel adapter through a raw HCI socket, or a bare controller
/// over an H4 stream.
///
/// `init` opens the adapter and reads its LE features; `run` programs the scan (extended commands
/// only when the controller supports LE Extended Advertising, else legacy), delivers every LE meta
/// event and, between them, a tick every `tickInterval` seconds until `cancel()`, then leaves
/// scanning as it found it. The ticks let time advance in a quiet room: exits and tracking ages fall due although
/// nothing is heard. With nothing heard it wakes only for the ticks: no busy timers. `run` must be called from one thread at a time;
/// `cancel` may be called from any thread, hence `@unchecked Sendable`.
public final class LEScanner: @unchecked Sendable {
    public let adapter: String
    public let features: LEFeatures
    public let commands: LEScanCommands
    private let socket: any HCIChannel
    private let clock: any BeaconClock
    /// Wakes `run` when `cancel` is called.
    private let wakeup: WakeupPipe

    /// Opens `transport` (the first kernel adapter by default) and reads its LE features. Events are
    /// stamped with `clock` (live: the monotonic clock).
    public init(
        transport: HCITransport = .kernel(nil), options: LEScanOptions = LEScanOptions(),
        clock: any BeaconClock = MonotonicBeaconClock()
    ) throws(RadioError) {
        let socket = try transport.open()
        let features = try socket.readLEFeatures()
        commands = try LEScanCommands(features: features, options: options)
        wakeup = try WakeupPipe()
        self.socket = socket
        self.adapter = socket.adapter
        self.features = features
        self.clock = clock
    }

    /// Scans and hands each LE meta event to `onEvent`, and the clock's time to `onTick` whenever
    /// `tickInterval` seconds have passed since the last tick, until `cancel()` is called; then disables
    /// scanning. Throws when the scan cannot be started or the socket fails.
    public func run(
        tickInterval: Double? = nil, onTick: (Double) -> Void = { _ in },
        onResume: (_ time: Double, _ slept: Double) -> Void = { _, _ in }, _ onEvent: (HCIEventPacket) -> Void
    ) throws(RadioError) {
        // A scan already on (another program's, the kernel's background scan, a crashed run) makes the
        // parameters command fail with Command Disallowed: then it is paused for ours and resumed after,
        // so the controller is left scanning as it was found (with our parameters: theirs cannot be read).
        var foundScanning = false
        do { try socket.send(commands.parameters) } catch .commandFailed(_, status: Self.commandDisallowed) {
            foundScanning = true
            _ = try? socket.send(commands.disable)
            try socket.send(commands.parameters)
        }
        try socket.send(commands.enable)
        var failure: RadioError?
        var ticker = ScanTicker(interval: tickInterval, clock: clock)
        // Reading what is there (timeout 0) since the last wait; once it is all read, reports gather.
        var draining = false
        while true {
            do {
                let wait = ticker.waitMilliseconds(clock: clock)
                let event = try socket.readEvent(timeoutMilliseconds: draining ? 0 : wait, wakeup: wakeup.readEnd)
                if event == nil, wakeup.isSignalled { break }
                if let slept = ticker.sleepEnded(clock: clock) {
                    try resume()
                    draining = false
                    onResume(clock.now(), slept)
                    continue
                }
                if let event {
                    draining = true
                    if event[0] == UInt8(EVT_LE_META_EVENT) { onEvent(HCIEventPacket(bytes: event, time: clock.now())) }
                } else if draining {
                    draining = false
                    wakeup.sleep(milliseconds: min(Self.batchMilliseconds, wait < 0 ? .max : wait))
                }
                ticker.tickIfDue(clock: clock, onTick)
            } catch {
                failure = error
                break
            }
        }
        _ = try? socket.send(commands.disable)
        if foundScanning { _ = try? socket.send(commands.enable) }
        if let failure { throw failure }
    }

    /// After a suspend: drops the events that wait in the socket (heard before the sleep, or stale by now) and
    /// programs the scan again, since the kernel or the controller's power-down may have stopped it.
    private func resume() throws(RadioError) {
        var dropped = 0
        while dropped < Self.mostEventsDroppedAtResume, try socket.readEvent(timeoutMilliseconds: 0, wakeup: nil) != nil {
            dropped += 1
        }
        _ = try? socket.send(commands.disable)
        try socket.send(commands.parameters)
        try socket.send(commands.enable)
    }

    /// A socket's buffer of reports: more than this and the controller is sending new ones as fast as they go.
    static let mostEventsDroppedAtResume = 10_000

    /// How long reports gather in the socket once all there were are read: a store's beacons send about a
    /// thousand a second, and waking for each cost more than handling it (1.5 % of a core at that rate, 0.4 %
    /// in batches). The first report after a quiet spell is read at once; a cancel ends the wait at once too.
    static let batchMilliseconds: Int32 = 50

    /// HCI error 0x0C.
    static let commandDisallowed: UInt8 = 0x0C

    /// Stops `run` (from any thread); it returns after disabling scanning.
    public func cancel() { wakeup.signal() }
}
