import Beacons
import Foundation

/// Whether a live scan goes through bluetoothd's D-Bus API: while bluetoothd discovers with the kernel adapter
/// (a raw scan would kill its discovery; BlueZScanner says why). Else raw HCI, over the kernel socket or an
/// H4 stream. Throws when bluetoothd runs but refuses this user.
public func scansThroughBluetoothd(transport: HCITransport) throws(RadioError) -> Bool {
    guard case .kernel(let adapter) = transport else { return false }
    return try BlueZScanner.bluetoothdDiscovers(adapter: adapter)
}

/// The scanner for the controller's state, as `scansThroughBluetoothd` chooses. Through bluetoothd, `power` and
/// `uuids` shape its advertisement monitor (BlueZScanner).
public func openScanner(
    transport: HCITransport, options: LEScanOptions, power: ScanPower = .high, uuids: [UUID] = []
) throws(RadioError) -> any LiveScanner {
    if case .kernel(let adapter) = transport, try scansThroughBluetoothd(transport: transport) {
        return try BlueZScanner(adapter: adapter, power: power, uuids: uuids)
    }
    return try LEScanner(transport: transport, options: options)
}

/// The advertiser for the controller's owner: bluetoothd's LEAdvertisingManager1 when bluetoothd manages the
/// kernel adapter (BlueZAdvertiser says why), else raw HCI over the kernel socket or an H4 stream.
public func openAdvertiser(transport: HCITransport, advertisement: BeaconAdvertisement)
    throws(RadioError)
    -> any LiveAdvertiser
{
    if case .kernel(let adapter) = transport,
        try BlueZAdvertiser.bluetoothdManages(adapter: adapter) != nil
    {
        return try BlueZAdvertiser(adapter: adapter, advertisement: advertisement)
    }
    return try BeaconAdvertiser(transport: transport, advertisement: advertisement)
}
