import Beacons

/// Live advertising, through whichever path owns the controller: `run` advertises until `cancel()` or the end
/// of its duration, then takes only its own advertising away.
public protocol LiveAdvertiser: AnyObject, Sendable {
    var adapter: String { get }
    /// "hci" (the controller programmed over raw HCI) or "bluetoothd" (registered with LEAdvertisingManager1).
    var via: String { get }
    /// The HCI command set sent, "legacy" or "extended"; nil through bluetoothd, where the kernel chooses.
    var commandSet: String? { get }
    /// The advertising interval asked for, as the path can express it (0.625 ms units, or whole ms).
    var intervalMilliseconds: Double { get }
    func run(duration: Double?) throws(RadioError)
    func cancel()
}

extension BeaconAdvertiser: LiveAdvertiser {
    public var via: String { "hci" }
    public var commandSet: String? { commands.usesExtendedAdvertising ? "extended" : "legacy" }
    public var intervalMilliseconds: Double { advertisement.intervalMilliseconds }
}
