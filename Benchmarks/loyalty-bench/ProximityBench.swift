import Beacons
import BeaconsTesting
import Foundation

/// The engine's stable proximity class against the bare Kalman filter (the rule before it),
/// AltBeacon's running average and ARMA filters, on the counter walk (`BeaconWalk.counterLinger`) with
/// seeds drawn afresh each run.
///
/// Entry lag is split by how the truth entered: mid-walk (crossing a boundary while walking) or setting off
/// from a stand (the shopper left 0.3 m and crosses 0.5 m after 0.33 s; left 3.3 m and crosses 3 m after
/// 0.5 s). A row with eager margins shows the trade: entering from a stand as early as the bare filter
/// does costs flapping while standing.
@MainActor func benchProximity(walks: Int = 100) {
    let firstSeed = UInt64.random(in: 1...UInt64.max / 2)
    let seeds = firstSeed..<(firstSeed + UInt64(walks))
    print("proximity: \(walks) walks per noise level, seeds \(seeds.lowerBound)..<\(seeds.upperBound)")
    func total(
        _ method: ProximityTrial.Method, noise: Double, seeds: Range<UInt64>, margins: ProximityMargins? = nil,
        power: ScanPower = .high
    ) -> ProximityScore {
        seeds.map {
            ProximityTrial.score(method, walk: .counterLinger(rssiNoise: noise, seed: $0), margins: margins, power: power)
        }.reduce(ProximityScore(), +)
    }
    func row(_ name: String, _ score: ProximityScore) {
        print(
            "    \(name)".padding(toLength: 38, withPad: " ", startingAt: 0)
                + String(
                    format: "%6.2fx %7.1f %% %7.2f s %6.2f s %6.2f s %8.2f %6d of %d", score.changeRatio,
                    100 * score.agreement, score.meanEntryLag, score.meanWalkingEntryLag,
                    score.meanSettingOffEntryLag, score.standingChangesPerWalk, score.missedEntries, score.entries))
    }
    let baselines: [ProximityTrial.Method] = [.kalmanThreshold, .altBeaconRunningAverage, .altBeaconARMA, .arma]
    // Ahead of a filter that follows the walk: fewer class changes, and as often right (within half a point: at
    // 2 dB the ARMA filter is about as right, it only flaps more). Ahead of one that is stuck (AltBeacon's two
    // barely change class because they lag or lean): 15 points more often right.
    func ahead(
        _ engine: ProximityScore, of scores: [ProximityTrial.Method: ProximityScore], _ methods: [ProximityTrial.Method]
    ) -> Bool {
        methods.allSatisfy { method in
            let baseline = scores[method]!
            return engine.changes < baseline.changes && engine.agreement >= baseline.agreement - 0.005
                || engine.agreement > baseline.agreement + 0.15
        }
    }
    var summary: [SampledRow] = []
    for noise in [2.0, 4.0, 6.0, 8.0] {
        print(
            "  noise \(Int(noise)) dB".padding(toLength: 38, withPad: " ", startingAt: 0)
                + "changes    right  entry lag: all  mid-walk  set off  standing  missed")
        print(String(repeating: " ", count: 38) + "/ideal                                          changes/walk")
        var scores: [ProximityTrial.Method: ProximityScore] = [:]
        for method in [ProximityTrial.Method.engine] + baselines {
            let score = total(method, noise: noise, seeds: seeds)
            scores[method] = score
            row(method.name, score)
        }
        row(
            "engine, eager margins (the trade)",
            total(.engine, noise: noise, seeds: seeds, margins: ProximityTrial.eagerMargins))
        let engine = scores[.engine]!
        // Issue 47: the walk as `--power balanced` and `low` hear it (25 % and 10 % of the advertisements, in windows
        // of 182.5 ms every 730 ms and 140 ms every 1,400 ms), the reference filters hearing the same readings.
        // Balanced with the profile's margins (`ProximityMargins.sampled`) and with full rate's for comparison.
        var sampled: [ScanPower: [ProximityTrial.Method: ProximityScore]] = [:]
        for power in [ScanPower.balanced, .low] {
            print("    sampled as \(power.rawValue) (\(power.summary)):")
            for method in [ProximityTrial.Method.engine] + baselines {
                let score = total(method, noise: noise, seeds: seeds, power: power)
                sampled[power, default: [:]][method] = score
                row("  " + method.name, score)
                if power == .balanced, method == .engine {
                    row(
                        "    the same, full rate's margins",
                        total(.engine, noise: noise, seeds: seeds, margins: .standard, power: .balanced))
                }
            }
        }
        summary.append((noise, engine, scores, sampled))
        let balanced = sampled[.balanced]![.engine]!
        // The targets hold up to the 6 dB; 8 dB is shown for what it is.
        guard noise <= 6 else { continue }
        record(
            String(format: "proximity at %.0f dB, sampled as balanced: class changes / ideal", noise),
            String(format: "%.2fx (every advertisement: %.2fx)", balanced.changeRatio, engine.changeRatio),
            target: "<= 1.5x", met: balanced.changeRatio <= 1.5)
        record(
            String(format: "proximity at %.0f dB, sampled as balanced: snapshots in the true class", noise),
            String(format: "%.1f %% (every advertisement: %.1f %%)", 100 * balanced.agreement, 100 * engine.agreement),
            target: ">= 90 %", met: balanced.agreement >= 0.9)
        let balancedAhead = ahead(balanced, of: sampled[.balanced]!, [.altBeaconRunningAverage, .altBeaconARMA, .arma])
        record(
            String(format: "proximity at %.0f dB, sampled as balanced: ahead of AltBeacon's running average and ARMA", noise),
            balancedAhead ? "yes" : "no", target: "fewer changes as often right, or 15 points more right",
            met: balancedAhead)
        // A shopper who walks across a boundary: the scan hears the walk in windows 730 ms apart, so the class may
        // follow up to one interval later than at full rate, not more.
        let interval = ScanPower.balanced.intervalSeconds
        record(
            String(format: "proximity at %.0f dB, sampled as balanced: entry lag mid-walk", noise),
            String(
                format: "%.2f s (every advertisement %.2f s)", balanced.meanWalkingEntryLag, engine.meanWalkingEntryLag),
            target: String(format: "<= every advertisement's + one scan interval (%.2f s)", interval),
            met: balanced.meanWalkingEntryLag <= engine.meanWalkingEntryLag + interval)
        let label = String(format: "proximity at %.0f dB", noise)
        // An entry a filter never shows is left out of its mean lag, so those are counted beside it.
        let lags = zip(baselines, ["bare Kalman", "AltBeacon average", "AltBeacon ARMA", "ARMA"]).map { method, name in
            let score = scores[method]!
            let missed = score.missedEntries > 0 ? " with \(score.missedEntries) missed" : ""
            return String(format: "%@ %.2f s", name, score.meanEntryLag) + missed
        }
        let bare = scores[.kalmanThreshold]!
        // Setting off from a stand, the engine waits for evidence the bare filter does not (it flaps while the
        // shopper stands): over all entries it lags at 4 and 6 dB by up to a quarter second, a documented trade
        // (docs/BENCHMARKS.md, Proximity). A lag past that allowance is a miss like any other.
        let tradeAllowance = 0.35
        record(
            "\(label): entry lag", String(format: "%.2f s", engine.meanEntryLag),
            reference: lags.joined(separator: ", "),
            ratio: String(format: "%.2fx the bare Kalman filter's", engine.meanEntryLag / bare.meanEntryLag),
            target: "<= the bare Kalman filter's", met: engine.meanEntryLag <= bare.meanEntryLag + 1e-9,
            knownMiss: engine.meanEntryLag <= bare.meanEntryLag + tradeAllowance
                ? String(
                    format: "within the documented trade of holding still (<= %.2f s behind; docs/BENCHMARKS.md, Proximity)",
                    tradeAllowance) : nil)
        record(
            "\(label): entry lag mid-walk",
            String(format: "%.2f s (bare Kalman %.2f s)", engine.meanWalkingEntryLag, bare.meanWalkingEntryLag),
            target: "<= the bare Kalman filter's", met: engine.meanWalkingEntryLag <= bare.meanWalkingEntryLag + 1e-9)
        record(
            "\(label): class changes / ideal", String(format: "%.2fx", engine.changeRatio), target: "<= 1.5x",
            met: engine.changeRatio <= 1.5)
        record(
            "\(label): snapshots in the true class", String(format: "%.1f %%", 100 * engine.agreement),
            target: ">= 90 %", met: engine.agreement >= 0.9)
        let fullRateAhead = ahead(engine, of: scores, baselines)
        record(
            "\(label): ahead of the bare Kalman filter, AltBeacon's running average and ARMA", fullRateAhead ? "yes" : "no",
            target: "fewer changes as often right, or 15 points more right", met: fullRateAhead)
    }
    printSampledSummary(summary)
    printShopFloorWalks(noise: 6, seeds: seeds)
    // The lag the rule adds: noise-free walks (readings still whole dBm).
    let engine = total(.engine, noise: 0, seeds: seeds)
    let before = total(.kalmanThreshold, noise: 0, seeds: seeds)
    record(
        "proximity: entry lag, noise-free walks",
        String(format: "%.2f s (bare Kalman filter %.2f s)", engine.meanEntryLag, before.meanEntryLag),
        target: "<= the bare filter's", met: engine.meanEntryLag <= before.meanEntryLag + 1e-9)
}

/// One noise level's scores: the engine and the references at full rate, and sampled as each duty-cycled profile.
typealias SampledRow = (
    noise: Double, engine: ProximityScore, fullRate: [ProximityTrial.Method: ProximityScore],
    sampled: [ScanPower: [ProximityTrial.Method: ProximityScore]]
)

/// Issue 47's table: for each noise level and sampling, the engine's class changes / ideal and snapshots right beside
/// AltBeacon's running average, AltBeacon's ARMA and ARMA heard the same way.
private func printSampledSummary(_ rows: [SampledRow]) {
    print("  proximity by sampling (targets: <= 1.5x the ideal changes, >= 90 % right, ahead of AltBeacon and ARMA):")
    print("    noise  sampling    engine           AltBeacon average  AltBeacon ARMA    ARMA c=0.1")
    func cell(_ score: ProximityScore) -> String {
        String(format: "%5.2fx %5.1f %%", score.changeRatio, 100 * score.agreement).padding(
            toLength: 18, withPad: " ", startingAt: 0)
    }
    for row in rows {
        let samplings: [(String, [ProximityTrial.Method: ProximityScore], ProximityScore)] =
            [("full rate", row.fullRate, row.engine)]
            + [ScanPower.balanced, .low].map { ($0.rawValue, row.sampled[$0]!, row.sampled[$0]![.engine]!) }
        for (name, scores, engine) in samplings {
            let cells = [engine, scores[.altBeaconRunningAverage]!, scores[.altBeaconARMA]!, scores[.arma]!].map(cell)
            print(
                String(format: "    %2.0f dB  ", row.noise) + name.padding(toLength: 12, withPad: " ", startingAt: 0)
                    + cells.joined().trimmingCharacters(in: .whitespaces))
        }
    }
}

/// The engine at each profile on walks its margins were not chosen on (`BeaconWalk.shopFloor`), beside the counter
/// walk: what a rule tuned to one walk would lose elsewhere shows here. Printed, not targets.
private func printShopFloorWalks(noise: Double, seeds: Range<UInt64>) {
    print(String(format: "  proximity on other walks at %.0f dB, the engine (changes / ideal, right):", noise))
    print("    walk                       full rate         balanced          low")
    let bySeed = seeds.map { seed in
        [(name: "the counter walk (tuned on)", walk: BeaconWalk.counterLinger(rssiNoise: noise, seed: seed))]
            + BeaconWalk.shopFloor(rssiNoise: noise, seed: seed)
    }
    for (index, (name, _)) in bySeed[0].enumerated() {
        let walks = bySeed.map { $0[index].walk }
        let cells = [ScanPower.high, .balanced, .low].map { power in
            let score = walks.map { ProximityTrial.score(.engine, walk: $0, power: power) }.reduce(ProximityScore(), +)
            return String(format: "%5.2fx %5.1f %%", score.changeRatio, 100 * score.agreement).padding(
                toLength: 18, withPad: " ", startingAt: 0)
        }
        print("    " + name.padding(toLength: 27, withPad: " ", startingAt: 0) + cells.joined())
    }
}
