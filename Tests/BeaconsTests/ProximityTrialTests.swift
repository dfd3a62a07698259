import Beacons
import BeaconsTesting
import Foundation
import Testing

/// The scorer `make bench` and ProximityRuleTests judge the proximity rules with: what it counts of the truth
/// comes from the walk's geometry alone, what it counts of a rule from that rule's snapshots.
@Suite struct ProximityTrialTests {
    /// The counter walk's true class changes four times: immediate -> near (0.5 m at 10.3 s, a second after
    /// setting off), near -> far (3 m at 14.5 s, walking), far -> near (3 m at 84.5 s, half a second after
    /// leaving the linger at 3.3 m), near -> immediate (0.5 m at 88.7 s, walking). Two of them mid-walk.
    @Test(arguments: ProximityTrial.Method.allCases)
    func theTruthIsCountedFromTheWalkWhateverTheRule(method: ProximityTrial.Method) {
        let score = ProximityTrial.score(method, walk: .counterLinger(rssiNoise: 6, seed: 1))
        #expect(score.walks == 1)
        #expect(score.entries == 4)
        #expect(score.walkingEntries == 2)
        #expect(score.idealChanges == 4, "the truth sampled once a second changes as often as the truth")
        #expect(score.entriesShown <= score.entries && score.walkingEntriesShown <= score.walkingEntries)
        #expect(score.agreeing <= score.snapshots && score.standingChanges <= score.changes)
    }

    /// Snapshots once a second of the sightings' clock, over the walk's 99 s; the score's snapshot and
    /// change counts are those of the snapshots.
    @Test(arguments: ProximityTrial.Method.allCases)
    func theRulesSideIsCountedFromItsSnapshots(method: ProximityTrial.Method) {
        let walk = BeaconWalk.counterLinger(rssiNoise: 6, seed: 2)
        let shown = ProximityTrial.snapshots(method, walk: walk)
        let gaps = zip(shown, shown.dropFirst()).map { $1.time - $0.time }
        #expect(gaps.allSatisfy { abs($0 - 1) < 0.15 }, "\(gaps)")
        #expect((97...99).contains(shown.count), "\(shown.count) snapshots")
        let score = ProximityTrial.score(method, walk: walk)
        #expect(score.snapshots == shown.count)
        #expect(score.changes == zip(shown, shown.dropFirst()).count { $0.proximity != $1.proximity })
    }

    /// The walk is the seed's: the same seed scores the same, another seed (with noise) differently.
    @Test func aWalkIsItsSeeds() {
        let one = ProximityTrial.score(.arma, walk: .counterLinger(rssiNoise: 6, seed: 3))
        #expect(one == ProximityTrial.score(.arma, walk: .counterLinger(rssiNoise: 6, seed: 3)))
        let others = (4..<8).map { ProximityTrial.score(.arma, walk: .counterLinger(rssiNoise: 6, seed: $0)) }
        #expect(others.contains { $0 != one })
    }

    /// The shop-floor walks are what their names say, and the mirrored linger mirrors the counter walk's: the same
    /// stop-and-go from far, the stop just inside the near limit where the counter walk's is just outside it. Their
    /// noise and seed are the counter walk's, so the bench compares like with like.
    @Test func theShopFloorWalksMirrorTheCounterWalksLinger() throws {
        let walks = BeaconWalk.shopFloor(rssiNoise: 6, seed: 9)
        #expect(Set(walks.map(\.name)).count == walks.count && walks.count >= 5)
        for (name, walk) in walks {
            #expect(walk.rssiNoise == 6 && walk.seed == 9 && walk.beacons.count == 1, "\(name)")
            let score = ProximityTrial.score(.engine, walk: walk)
            #expect(score.entries >= 2, "\(name): the truth changes class")
        }
        let mirrored = try #require(walks.first { $0.name.contains("mirrored") }).walk.beacons[0]
        let counter = BeaconWalk.counterLinger(rssiNoise: 6, seed: 9).beacons[0]
        // The longest stop of each, and where the walk came from.
        func linger(_ beacon: BeaconWalk.Beacon) -> (distance: Double, seconds: Double, from: Double) {
            let path = beacon.path
            let index = (1..<path.count).max { path[$0].time - path[$0 - 1].time < path[$1].time - path[$1 - 1].time }!
            let stop = path[index]
            #expect(path[index - 1].distance == stop.distance, "a stop, not a walk")
            let before = path[..<(index - 1)].last { $0.distance != stop.distance }!
            return (stop.distance, stop.time - path[index - 1].time, before.distance)
        }
        let (mirror, original) = (linger(mirrored), linger(counter))
        let model = DistanceModel(pathLossExponent: 2)
        #expect(model.proximity(distance: original.distance) == .far && model.proximity(distance: original.from) == .far)
        #expect(model.proximity(distance: mirror.distance) == .near && model.proximity(distance: mirror.from) == .far)
        #expect(mirror.seconds >= original.seconds)
        // As close to the 3 m limit inside as the counter walk's stop is outside it, within a tenth of a dB.
        let inside = 20 * log10(model.nearLimit / mirror.distance)
        let outside = 20 * log10(original.distance / model.nearLimit)
        #expect(abs(inside - outside) < 0.15, "\(inside) dB inside, \(outside) dB outside")
    }

    @Test func scoresAddFieldByField() {
        var a = ProximityScore()
        (a.walks, a.changes, a.idealChanges, a.snapshots, a.agreeing) = (1, 2, 3, 4, 5)
        (a.entries, a.entriesShown, a.entryLagSum) = (6, 7, 8.5)
        (a.walkingEntries, a.walkingEntriesShown, a.walkingEntryLagSum) = (9, 10, 11.5)
        (a.standingSnapshots, a.standingChanges) = (12, 13)
        var b = ProximityScore()
        (b.walks, b.changes, b.idealChanges, b.snapshots, b.agreeing) = (100, 200, 300, 400, 500)
        (b.entries, b.entriesShown, b.entryLagSum) = (600, 700, 800)
        (b.walkingEntries, b.walkingEntriesShown, b.walkingEntryLagSum) = (900, 1000, 1100)
        (b.standingSnapshots, b.standingChanges) = (1200, 1300)
        let sum = a + b
        #expect([sum.walks, sum.changes, sum.idealChanges, sum.snapshots, sum.agreeing] == [101, 202, 303, 404, 505] as [Int])
        #expect([sum.entries, sum.entriesShown, sum.walkingEntries, sum.walkingEntriesShown] == [606, 707, 909, 1010] as [Int])
        #expect([sum.entryLagSum, sum.walkingEntryLagSum] == [808.5, 1111.5] as [Double])
        #expect([sum.standingSnapshots, sum.standingChanges] == [1212, 1313] as [Int])
        #expect(sum.changeRatio == 202.0 / 303 && sum.agreement == 505.0 / 404)
        #expect(sum.meanEntryLag == 808.5 / 707 && sum.missedEntries == 606 - 707)
    }
}
