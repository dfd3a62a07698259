import Beacons
import BeaconsTesting
import Foundation
import Testing

/// The stable proximity class against the bare Kalman filter and AltBeacon's filters, over
/// many seeded walks past a counter (`BeaconWalk.counterLinger`): properties that hold across seeds,
/// not figures of one trace.
@Suite struct ProximityRuleTests {
    static let seeds: Range<UInt64> = 1..<41

    static func total(
        _ method: ProximityTrial.Method, noise: Double, seeds: Range<UInt64> = seeds, margins: ProximityMargins? = nil,
        power: ScanPower = .high
    ) -> ProximityScore {
        seeds.map {
            ProximityTrial.score(
                method, walk: .counterLinger(rssiNoise: noise, seed: $0), margins: margins, power: power)
        }.reduce(ProximityScore(), +)
    }

    @Test(arguments: [2.0, 4.0, 6.0])
    func theEngineChangesClassLittleMoreThanTheTruthAndAgreesWithIt(noise: Double) {
        let engine = Self.total(.engine, noise: noise)
        #expect(engine.idealChanges == 4 * Self.seeds.count)
        #expect(engine.changeRatio <= 1.5, "\(engine)")
        #expect(engine.agreement >= 0.9, "\(engine)")
        #expect(engine.missedEntries * 100 <= engine.entries, "\(engine)")
    }

    /// Issue 47: the walk as `--power balanced` hears it (a quarter of the readings), with the profile's margins:
    /// the targets hold, and it is right more often than with full rate's margins. At 6 dB it is right less often
    /// than 90 %, about as often as with full rate's margins (docs/PROXIMITY.md says why); the bench shows it.
    @Test(arguments: [2.0, 4.0])
    func sampledAsBalancedTheEngineHoldsItsTargets(noise: Double) {
        let balanced = Self.total(.engine, noise: noise, power: .balanced)
        let fullRates = Self.total(.engine, noise: noise, margins: .standard, power: .balanced)
        #expect(balanced.changeRatio <= 1.5, "\(balanced)")
        #expect(balanced.agreement >= 0.9, "\(balanced)")
        #expect(balanced.agreement > fullRates.agreement, "\(balanced) vs \(fullRates)")
    }

    /// Issue 47: sampled as balanced, the reference filters hear the same quarter of the readings; the engine stays
    /// ahead of them as it is at full rate. ARMA (real numbers) flaps more and is right less often; AltBeacon's running
    /// average and integer ARMA change class rarely only because they lag or lean, and are 15 points less often right.
    @Test(arguments: [2.0, 4.0, 6.0])
    func sampledAsBalancedTheEngineIsAheadOfAltBeaconsFiltersSampledAlike(noise: Double) {
        let engine = Self.total(.engine, noise: noise, power: .balanced)
        let arma = Self.total(.arma, noise: noise, power: .balanced)
        #expect(engine.changes < arma.changes, "\(arma) vs \(engine)")
        #expect(engine.agreement > arma.agreement, "\(arma) vs \(engine)")
        for method in [ProximityTrial.Method.altBeaconRunningAverage, .altBeaconARMA] {
            let baseline = Self.total(method, noise: noise, power: .balanced)
            #expect(baseline.snapshots >= engine.snapshots - Self.seeds.count, "\(method): \(baseline)")
            #expect(engine.agreement > baseline.agreement + 0.15, "\(method): \(baseline) vs \(engine)")
        }
    }

    /// Full rate's margins wait for evidence that a quarter of the readings gives four times slower: the sampled
    /// margins see a walk sooner and miss fewer entries, and still flap within the target.
    @Test(arguments: [4.0, 6.0])
    func sampledAsBalancedTheProfilesMarginsSeeAWalkSooner(noise: Double) {
        let sampled = Self.total(.engine, noise: noise, power: .balanced)
        let fullRates = Self.total(.engine, noise: noise, margins: .standard, power: .balanced)
        #expect(ProximityMargins.standard(for: .balanced) == .sampled)
        #expect(ProximityMargins.standard(for: .low) == .sampled)
        #expect(ProximityMargins.standard(for: .high) == .standard)
        #expect(sampled.meanWalkingEntryLag < fullRates.meanWalkingEntryLag, "\(sampled) vs \(fullRates)")
        #expect(sampled.missedEntries < fullRates.missedEntries, "\(sampled) vs \(fullRates)")
        #expect(sampled.changeRatio <= 1.5, "\(sampled)")
    }

    @Test(arguments: [2.0, 4.0, 6.0])
    func theEngineIsAheadOfTheBaselines(noise: Double) {
        let engine = Self.total(.engine, noise: noise)
        // The filters that follow the walk flap more and are right no more often (at 2 dB the ARMA filter is
        // about as right: within half a point).
        for method in [ProximityTrial.Method.kalmanThreshold, .arma] {
            let baseline = Self.total(method, noise: noise)
            #expect(engine.changes < baseline.changes, "\(method): \(baseline) vs \(engine)")
            #expect(engine.agreement >= baseline.agreement - 0.005, "\(method): \(baseline) vs \(engine)")
            if noise >= 4 { #expect(engine.agreement > baseline.agreement, "\(method): \(baseline) vs \(engine)") }
        }
        // AltBeacon's two change class about as rarely as the truth only because they are off: the
        // running average lags through the near band, the integer ARMA leans toward stronger levels.
        for method in [ProximityTrial.Method.altBeaconRunningAverage, .altBeaconARMA] {
            let baseline = Self.total(method, noise: noise)
            #expect(engine.agreement > baseline.agreement + 0.15, "\(method): \(baseline) vs \(engine)")
        }
    }

    @Test(arguments: [0.0, 2.0])
    func enteringAClassLagsNoMoreThanTheBareKalmanFilter(noise: Double) {
        // 80 walks, 320 entries: a shopper setting off from a stand across a boundary is seen by the
        // recent readings before the Kalman level follows (at 4 dB and more the engine still lags it on
        // those entries: see the next tests and `make bench`).
        let seeds: Range<UInt64> = 100..<180
        let engine = Self.total(.engine, noise: noise, seeds: seeds)
        let before = Self.total(.kalmanThreshold, noise: noise, seeds: seeds)
        #expect(engine.missedEntries == 0, "\(engine)")
        #expect(engine.meanEntryLag <= before.meanEntryLag, "\(engine) vs \(before)")
    }

    @Test(arguments: [2.0, 4.0, 6.0])
    func enteringAClassMidWalkLagsLessThanTheBareKalmanFilter(noise: Double) {
        let engine = Self.total(.engine, noise: noise)
        let before = Self.total(.kalmanThreshold, noise: noise)
        // Two of the four entries of each walk are made walking: out past 3 m, and in past 0.5 m.
        #expect(engine.walkingEntries == 2 * Self.seeds.count)
        #expect(engine.meanWalkingEntryLag < before.meanWalkingEntryLag, "\(engine) vs \(before)")
        // The bare filter's earlier entries from a stand come with its flapping while the shopper stands.
        #expect(engine.standingChanges * 3 < before.standingChanges, "\(engine) vs \(before)")
    }

    @Test func smallerMarginsEnterFromAStandSoonerAndFlapMore() {
        // The trade `make bench` prints: the margins are what holds the class still.
        let standard = Self.total(.engine, noise: 6)
        let eagerScore = Self.seeds.map {
            ProximityTrial.score(
                .engine, walk: .counterLinger(rssiNoise: 6, seed: $0), margins: ProximityTrial.eagerMargins)
        }.reduce(ProximityScore(), +)
        #expect(eagerScore.meanSettingOffEntryLag < standard.meanSettingOffEntryLag, "\(eagerScore) vs \(standard)")
        #expect(eagerScore.standingChanges > standard.standingChanges, "\(eagerScore) vs \(standard)")
        #expect(eagerScore.changeRatio > 1.5, "\(eagerScore)")
    }

    @Test func enteringAClassLagsLessThanARMA() {
        for noise in [2.0, 4.0, 6.0] {
            let engine = Self.total(.engine, noise: noise)
            let arma = Self.total(.arma, noise: noise)
            #expect(engine.meanEntryLag < arma.meanEntryLag, "noise \(noise): \(engine) vs \(arma)")
        }
    }

    @Test func standingJustPastABoundarySettlesOnItsSide() throws {
        // 0.8 dB past the 3 m limit, noise 6 dB at 10 Hz: whichever class the first readings suggest,
        // the class settles on far. The bare Kalman filter shows near about a quarter of the time.
        var far = 0
        var farBefore = 0
        var snapshots = 0
        for seed in Self.seeds {
            var walk = BeaconWalk.counterLinger(rssiNoise: 6, seed: seed)
            walk.beacons[0].path = [BeaconWalk.Waypoint(time: 0, distance: 3.3)]
            walk.duration = 120
            let last = ProximityTrial.snapshots(.engine, walk: walk).suffix(60)
            far += last.count { $0.proximity == .far }
            farBefore += ProximityTrial.snapshots(.kalmanThreshold, walk: walk).suffix(60).count { $0.proximity == .far }
            snapshots += last.count
        }
        #expect(far * 100 >= snapshots * 95, "\(far) of \(snapshots) far")
        #expect(farBefore * 100 < snapshots * 85, "\(farBefore) of \(snapshots) far before")
    }

    @Test func theThresholdRuleIsTheBucketOfTheDistanceAndTheEvidenceRuleIsNot() throws {
        let model = DistanceModel()
        var threshold = try Ranger(configuration: Ranger.Configuration(proximityRule: .threshold))
        var evidence = try Ranger()
        var differ = 0
        BeaconWalk.counterLinger(rssiNoise: 6, seed: 7).forEachAdvert { sighting, _ in
            if let snapshot = threshold.observe(sighting)?.beacons.first {
                #expect(snapshot.proximity == model.proximity(distance: snapshot.distance))
            }
            if let snapshot = evidence.observe(sighting)?.beacons.first,
                snapshot.proximity != model.proximity(distance: snapshot.distance)
            {
                differ += 1
            }
        }
        #expect(differ > 0, "hysteresis keeps a class past its boundary")
    }

    @Test func referenceFiltersFollowTheirSources() {
        var arma = ARMAFilter(integerState: true)
        arma.update(rssi: -70)
        arma.update(rssi: -79)  // -70.9 truncated toward zero: unchanged
        #expect(arma.value == -70)
        arma.update(rssi: -69)  // -69.9 truncated: -69
        #expect(arma.value == -69)
        var real = ARMAFilter(integerState: false)
        real.update(rssi: -70)
        real.update(rssi: -79)
        #expect(abs(real.value! - -70.9) < 1e-12)

        var average = TrimmedRunningAverage()
        for (index, rssi) in [-90.0, -60, -61, -62, -63, -64, -65, -66, -67, -68, -30, -69].enumerated() {
            average.update(rssi: rssi, at: Double(index))
        }
        // 12 readings: 2 dropped at each end (-90, -69 and -30, -60), the mean of the other 8.
        let kept: [Double] = [-61, -62, -63, -64, -65, -66, -67, -68]
        #expect(average.value(at: 12) == kept.reduce(0, +) / 8)
        // Readings 20 s old or more are gone.
        #expect(average.value(at: 30) == -69)
    }
}
