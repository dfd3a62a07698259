import Beacons

extension LEAdvertisingCommands {
    /// The most data changes a dry run or a capture lists: past it, --duration is refused rather than filling a disk.
    static let maximumDataChanges = 100_000

    /// The advertising data changes an advertiser sends in the first `seconds` after enabling: when, and the
    /// command. None for an iBeacon; an Eddystone beacon's EID turns and TLM turns.
    public func dataChanges(of advertisement: BeaconAdvertisement, within seconds: Double)
        throws(RadioError) -> [(elapsed: Double, command: HCICommand)]
    {
        var changes: [(elapsed: Double, command: HCICommand)] = []
        var data = advertisement.advertisingData
        var elapsed = 0.0
        while let next = advertisement.nextChange(after: elapsed), next < seconds {
            elapsed = next
            let due = advertisement.advertisingData(elapsed: next)
            guard due != data else { continue }
            guard changes.count < Self.maximumDataChanges else {
                throw .invalidAdvertisingParameters(
                    "more than \(Self.maximumDataChanges) data changes in \(seconds) s: give a shorter --duration")
            }
            changes.append((next, try replacingData(due)))
            data = due
        }
        return changes
    }

    /// Writes what advertising `advertisement` with these commands looks like to a BTSnoop file (datalink
    /// 1002), starting at `start` (Unix seconds). Host to controller: the start commands 1 ms apart, then each of
    /// `changes` at its time. Controller to host: the report a scanner 1 m away receives one interval after each
    /// data took effect (its address all zeros, since no adapter is read). Then the stop command, at the end of
    /// `duration` (or right after the last report).
    public func writeCapture(
        of advertisement: BeaconAdvertisement, changes: [(elapsed: Double, command: HCICommand)] = [],
        duration: Double?, to file: String, at start: Double
    ) throws(BTSnoopError) {
        let enabled = start + 0.002
        let interval = advertisement.intervalMilliseconds / 1000
        let anyAddress = BluetoothAddress(wire: (0, 0, 0, 0, 0, 0))
        let writer = try BTSnoopWriter(path: file, datalink: .h4)
        for (index, command) in self.start.enumerated() {
            try writer.write(.command, command.packet, at: BTSnoopTimestamp(unixSeconds: start + 0.001 * Double(index)))
        }
        var heard = enabled
        for (elapsed, command) in [(0, nil)] + changes.map({ ($0.elapsed, Optional($0.command)) }) {
            if let command { try writer.write(.command, command.packet, at: BTSnoopTimestamp(unixSeconds: enabled + elapsed)) }
            heard = enabled + elapsed + interval
            // Cannot throw: one report of at most 31 bytes fits an LE Advertising Report event.
            let report = advertisement.report(from: anyAddress, elapsed: elapsed)
            let event = try! HCIEvent.advertisingReportEvent([report], format: .legacy)
            try writer.write(.event, event, at: BTSnoopTimestamp(unixSeconds: heard))
        }
        let stopped = max(enabled + (duration ?? 0), heard + 0.001)
        try writer.write(.command, disable.packet, at: BTSnoopTimestamp(unixSeconds: stopped))
        try writer.close()
    }
}
