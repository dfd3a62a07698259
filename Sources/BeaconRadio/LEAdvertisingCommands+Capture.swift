import Beacons

extension LEAdvertisingCommands {
    /// Writes what advertising `advertisement` with these commands looks like to a BTSnoop file (datalink
    /// 1002), starting at `start` (Unix seconds). Host to controller: the start commands 1 ms apart.
    /// Controller to host: the report a scanner 1 m away receives one interval after enabling (its address
    /// all zeros, since no adapter is read). Then the stop command, at the end of `duration` (or right after).
    public func writeCapture(
        of advertisement: BeaconAdvertisement, duration: Double?, to file: String, at start: Double
    ) throws(BTSnoopError) {
        let enabled = start + 0.002
        let heard = enabled + advertisement.intervalMilliseconds / 1000
        let stopped = max(enabled + (duration ?? 0), heard + 0.001)
        let anyAddress = BluetoothAddress(wire: (0, 0, 0, 0, 0, 0))
        let writer = try BTSnoopWriter(path: file, datalink: .h4)
        for (index, command) in self.start.enumerated() {
            try writer.write(.command, command.packet, at: BTSnoopTimestamp(unixSeconds: start + 0.001 * Double(index)))
        }
        // Cannot throw: one report of 30 bytes fits an LE Advertising Report event.
        let event = try! HCIEvent.advertisingReportEvent([advertisement.report(from: anyAddress)], format: .legacy)
        try writer.write(.event, event, at: BTSnoopTimestamp(unixSeconds: heard))
        try writer.write(.command, disable.packet, at: BTSnoopTimestamp(unixSeconds: stopped))
        try writer.close()
    }
}
