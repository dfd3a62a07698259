import Beacons
import Foundation
import Testing

/// The RSSI a receiver held 1 m from a beacon hears over `seconds`, from the synthetic walk's log-distance
/// model with Gaussian noise.
private func samplesAtOneMetre(measuredPower: Int8, noise: Double, seconds: Double = 30, seed: UInt64) -> [Int8] {
    let beacon = BeaconWalk.Beacon(
        frame: BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: matey, major: 1, minor: 1), measuredPower: measuredPower),
        address: BluetoothAddress(wire: (0x01, 0x02, 0x03, 0x04, 0x05, 0xC6)),
        path: [.init(time: 0, distance: 1), .init(time: seconds, distance: 1)])
    var rssi: [Int8] = []
    BeaconWalk(beacons: [beacon], rssiNoise: noise, seed: seed).forEachAdvert { sighting, _ in
        rssi.append(sighting.rssi)
    }
    return rssi
}

@Suite struct CalibrationTests {
    @Test(arguments: [(Int8(-59), UInt64(1)), (-65, 7), (-72, 42), (-50, 2024)])
    func recoversTheMeasuredPowerOfASimulatedBeacon(power: Int8, seed: UInt64) throws {
        let samples = samplesAtOneMetre(measuredPower: power, noise: 4, seed: seed)
        #expect(samples.count >= 290)
        let calibration = try MeasuredPowerCalibration(rssi: samples)
        #expect(abs(Int(calibration.measuredPower) - Int(power)) <= 2, "\(calibration)")
        #expect(abs(calibration.meanRSSI - Double(power)) <= 2)
        // The spread reported is the noise put in.
        #expect((3...5).contains(calibration.standardDeviation), "\(calibration.standardDeviation)")
        #expect(calibration.samplesUsed + calibration.samplesRejected == samples.count)
        #expect(calibration.samplesRejected <= samples.count / 50, "Gaussian noise has few 3-sigma outliers")
    }

    @Test func rejectsInjectedOutliers() throws {
        var samples = samplesAtOneMetre(measuredPower: -59, noise: 3, seed: 9)
        let clean = samples.count
        // A fifth of the readings through a body (-90 dBm) and a few from a reflection boosting the signal.
        var random = SplitMix64(seed: 3)
        for index in stride(from: 0, to: clean, by: 5) {
            samples[index] = Int8(-88 - Int(random.next() % 6))
        }
        for index in stride(from: 2, to: clean, by: 40) { samples[index] = -35 }
        let naiveMean = samples.reduce(0) { $0 + Double($1) } / Double(samples.count)
        #expect(abs(naiveMean + 59) > 4, "without rejection the answer would be wrong")

        let calibration = try MeasuredPowerCalibration(rssi: samples)
        #expect(abs(Int(calibration.measuredPower) + 59) <= 2, "\(calibration)")
        #expect(calibration.samplesRejected >= clean / 5 + clean / 40)
        #expect(calibration.standardDeviation < 4)
    }

    @Test func refusesBelowTheMinimumSampleCount() {
        let samples = samplesAtOneMetre(measuredPower: -59, noise: 4, seconds: 1.8, seed: 5)
        #expect(samples.count == 19)
        #expect(throws: CalibrationError.tooFewSamples(used: 19, rejected: 0, minimum: 20)) {
            try MeasuredPowerCalibration(rssi: samples)
        }
        #expect(throws: CalibrationError.tooFewSamples(used: 0, rejected: 0, minimum: 20)) {
            try MeasuredPowerCalibration(rssi: [])
        }
        // Enough readings, but too few left once the outliers are set aside.
        let mixed: [Int8] =
            Array(repeating: -59, count: 12) + Array(repeating: -60, count: 6) + Array(repeating: -95, count: 7)
        #expect(throws: CalibrationError.tooFewSamples(used: 18, rejected: 7, minimum: 20)) {
            try MeasuredPowerCalibration(rssi: mixed)
        }
        let message = CalibrationError.tooFewSamples(used: 18, rejected: 7, minimum: 20).description
        #expect(message.contains("only 18 RSSI samples") && message.contains("rejecting 7 outliers"))
        #expect(message.contains("at least 20"))
    }

    @Test func aQuietBeaconKeepsItsOneDecibelNeighbours() throws {
        // The MAD of these is 0; without the 1 dB floor every -58 and -60 would be an "outlier".
        let samples: [Int8] = Array(repeating: -59, count: 30) + [-58, -60, -60, -58, -61]
        let calibration = try MeasuredPowerCalibration(rssi: samples)
        #expect(calibration.samplesRejected == 0)
        #expect(calibration.measuredPower == -59)
        #expect(calibration.medianRSSI == -59)
    }

    @Test func unavailableRSSIIsNotASample() throws {
        let samples: [Int8] = Array(repeating: -70, count: 20) + Array(repeating: 127, count: 30)
        let calibration = try MeasuredPowerCalibration(rssi: samples)
        #expect(calibration.measuredPower == -70)
        #expect(calibration.samplesUsed == 20 && calibration.samplesRejected == 0)
        #expect(calibration.standardDeviation == 0)
    }

    @Test func badSettingsAreRefused() {
        for configuration in [
            MeasuredPowerCalibration.Configuration(minimumSamples: 0),
            .init(outlierThreshold: 0), .init(outlierThreshold: .nan), .init(minimumDeviation: -1),
        ] {
            #expect(throws: CalibrationError.self) {
                try MeasuredPowerCalibration(rssi: [-59, -59], configuration: configuration)
            }
        }
    }
}
