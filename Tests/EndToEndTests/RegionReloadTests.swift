import Beacons
import Foundation
import Geofencing
import LoyaltyTesting
import Testing

/// A sync in the middle of `loyalty scan` that brings a retailer the cache did not know: its beacon region
/// is monitored from then on, as its stores' geofences are.
@Suite struct RegionReloadTests {
    /// The shopper starts at one retailer's store, with the catalog of that area cached, and walks (well,
    /// jumps) 55 km to another's while its beacon is heard all along: the move syncs the new area mid-scan.
    @Test func aRetailerASyncBringsMidScanIsMonitored() throws {
        let server = try StoryServer.shared.get()
        // Somewhere no other test puts a store (an area catalog holds the retailers with a store in it): a random
        // place, from a seed that every failure names.
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let first = GeoCoordinate(
            latitude: Double.random(in: -40...40, using: &random), longitude: Double.random(in: -170...170, using: &random))
        let farther = GeoCoordinate(latitude: first.latitude + 0.5, longitude: first.longitude)
        var uuids: [String] = []
        for (name, point) in [("Near", first), ("Far", farther)] {
            let uuid = UUID().uuidString
            let retailer = try server.retailer(name, uuid: uuid)
            try retailer.setOffer(1, 1, "\(name) coffee", [])
            try retailer.ok([
                "retailer", "store", "set", "shop", "--name", "\(name) shop", "--lat", "\(point.latitude)", "--lon",
                "\(point.longitude)", "--radius-m", "100",
            ])
            uuids.append(uuid)
        }
        let shopper = try server.newAccount()
        // The area catalog (`--all --near`): a working set would fetch the far retailer as soon as its beacon is heard.
        try shopper.ok(["sync", "--all", "--near", "\(first.latitude),\(first.longitude)", "--radius-km", "5"])
        #expect(try shopper.cachedTitles() == ["Near coffee"], "seed \(seed)")

        // `beacon simulate` starts its captures at 1_700_000_000: ten seconds at the first store, then the
        // second's, both beacons heard for the whole 40 s.
        let start = 1_700_000_000.0
        let log = server.work.appendingPathComponent("jump-\(UUID().uuidString).nmea")
        let lines = (0..<40).flatMap { second in
            let fix = GeoFix(time: start + Double(second), coordinate: second < 10 ? first : farther)
            return [NMEAWriter.rmc(fix), NMEAWriter.gga(fix)]
        }
        try (lines.joined(separator: "\r\n") + "\r\n").write(to: log, atomically: true, encoding: .utf8)
        let walk = try server.walk(uuids.map { "\($0):1:1@0=2,40=2" })

        let scan = try shopper.ok([
            "scan", "--replay", walk.path, "--location", "nmea:\(log.path)", "--radius-km", "5", "--json",
        ])
        let entered = scan.jsonLines.filter { $0["event"] as? String == "enter" && $0["region"] is String }
        let times = Dictionary(entered.map { ($0["region"] as! String, $0["t"] as? Double ?? -1) }) { min($0, $1) }
        #expect(times[uuids[0]].map { $0 < start + 1 } == true, "seed \(seed): \(scan.stdout)")
        // Unknown to the cache until the sync at the second store, ten seconds in.
        #expect(times[uuids[1]].map { (start + 10...start + 11).contains($0) } == true, "seed \(seed): \(scan.stdout)")
        #expect(
            scan.jsonLines.contains { ($0["offer"] as? [String: Any])?["title"] as? String == "Far coffee" }, "seed \(seed)")
    }
}
