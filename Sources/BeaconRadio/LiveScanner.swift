import Beacons

/// A live scan, through whichever path owns the adapter: `run` delivers LE advertising report events
/// and ticks until `cancel()`, then leaves the adapter as it found it. After a suspend it calls `onResume`
/// with the time and the seconds asleep, having dropped what was heard before the sleep and not yet read.
public protocol LiveScanner: AnyObject, Sendable {
    /// Which path: "raw HCI", "bluetoothd (advertisement monitor)" or "bluetoothd (discovery)".
    var path: String { get }
    func run(
        tickInterval: Double?, onTick: (Double) -> Void, onResume: (_ time: Double, _ slept: Double) -> Void,
        _ onEvent: (HCIEventPacket) -> Void
    ) throws(RadioError)
    func cancel()
}

extension LEScanner: LiveScanner {
    public var path: String { "raw HCI" }
}
