import BeaconRadio
import Beacons
import Testing

@Suite struct EddystoneBroadcastTests {
    static let uid = EddystoneUID(parsing: "00112233445566778899:AABBCCDDEEFF")!

    /// A stand-in for the EID computation that shows which window a counter fell in (K = 2).
    static func eidBeacon(startCounter: Double) -> EddystoneBroadcast {
        EddystoneBroadcast(
            beacon: .eid(exponent: 2, startCounter: startCounter) { EphemeralID(UInt64($0 >> 2)) }, measuredPower: -59)
    }

    /// Counter 6 at the start: the window of 4...7 until 2 s in, then 8...11 until 6 s, the times given, not read.
    @Test func theEIDTurnsWhenTheTwoToTheKWindowTurns() {
        let broadcast = Self.eidBeacon(startCounter: 6)
        #expect(broadcast.frame(elapsed: 0, intervalSeconds: 0.1) == .eid(EphemeralID(1), rangingPower: -18))
        #expect(broadcast.frame(elapsed: 1.999, intervalSeconds: 0.1) == .eid(EphemeralID(1), rangingPower: -18))
        #expect(broadcast.frame(elapsed: 2, intervalSeconds: 0.1) == .eid(EphemeralID(2), rangingPower: -18))
        #expect(broadcast.frame(elapsed: 5.9, intervalSeconds: 0.1) == .eid(EphemeralID(2), rangingPower: -18))
        #expect(broadcast.frame(elapsed: 6, intervalSeconds: 0.1) == .eid(EphemeralID(3), rangingPower: -18))
        #expect(broadcast.nextChange(after: 0, intervalSeconds: 0.1) == 2)
        #expect(broadcast.nextChange(after: 2, intervalSeconds: 0.1) == 6)
        #expect(Self.eidBeacon(startCounter: 8).nextChange(after: 0, intervalSeconds: 0.1) == 4)
        // Started half a second into counter 6: the window turns when the counter reaches 8, 1.5 s in.
        let halfway = Self.eidBeacon(startCounter: 6.5)
        #expect(halfway.nextChange(after: 0, intervalSeconds: 0.1) == 1.5)
        #expect(halfway.frame(elapsed: 1.49, intervalSeconds: 0.1) == .eid(EphemeralID(1), rangingPower: -18))
        #expect(halfway.frame(elapsed: 1.5, intervalSeconds: 0.1) == .eid(EphemeralID(2), rangingPower: -18))
    }

    @Test func everyNthIntervalIsTLMWithTheCountAndUptimeOfThen() throws {
        let telemetry = TelemetrySchedule(
            every: 3, batteryMillivolts: 3000, drainMillivoltsPerHour: 0, temperatureBits: 0x1580)
        let broadcast = EddystoneBroadcast(beacon: .uid(Self.uid), measuredPower: -59, telemetry: telemetry)
        let frames = (0..<7).map { broadcast.frame(elapsed: Double($0) * 0.1, intervalSeconds: 0.1) }
        let beacon = EddystoneFrame.uid(Self.uid, rangingPower: -18)
        #expect(frames[0] == beacon && frames[1] == beacon && frames[3] == beacon && frames[4] == beacon)
        #expect(
            frames[2]
                == .telemetry(
                    TelemetryFrame(batteryMillivolts: 3000, temperatureBits: 0x1580, advertisingCount: 3, uptimeTenths: 2)))
        #expect(
            frames[5]
                == .telemetry(
                    TelemetryFrame(batteryMillivolts: 3000, temperatureBits: 0x1580, advertisingCount: 6, uptimeTenths: 5)))
        let next = try #require(broadcast.nextChange(after: 0.2, intervalSeconds: 0.1))
        #expect(abs(next - 0.3) < 1e-9)
    }

    /// A static UID or URL never changes; with TLM the data changes into and out of each TLM interval, and the
    /// commands that change it are the ones the controller's command set takes.
    @Test func theDataChangesOnlyWhenTheFrameDoes() throws {
        let still = try BeaconAdvertisement(.eddystone(EddystoneBroadcast(beacon: .uid(Self.uid), measuredPower: -59)))
        let legacy = try LEAdvertisingCommands(extended: false, advertisement: still)
        #expect(try legacy.dataChanges(of: still, within: 100).isEmpty)

        let telemetry = TelemetrySchedule(every: 2, batteryMillivolts: 0, drainMillivoltsPerHour: 0, temperatureBits: 0x8000)
        let interleaved = try BeaconAdvertisement(
            .eddystone(EddystoneBroadcast(beacon: .uid(Self.uid), measuredPower: -59, telemetry: telemetry)))
        let extended = try LEAdvertisingCommands(extended: true, advertisement: interleaved)
        let changes = try extended.dataChanges(of: interleaved, within: 0.45)
        #expect(changes.count == 4)
        #expect(changes.allSatisfy { $0.command.opcode == 0x2037 })
        for (change, expected) in zip(changes.map(\.elapsed), [0.1, 0.2, 0.3, 0.4]) { #expect(abs(change - expected) < 1e-9) }
        #expect(throws: RadioError.self) { try extended.dataChanges(of: interleaved, within: 1_000_000) }
    }
}
