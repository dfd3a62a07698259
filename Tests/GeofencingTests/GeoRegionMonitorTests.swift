import Beacons
import Foundation
import Geofencing
import Testing

private let store = GeoCoordinate(latitude: 51.5136, longitude: -0.1365)  // a shop on Carnaby Street

/// The point `metres` north (negative: south) of `origin`.
private func north(of origin: GeoCoordinate, _ metres: Double) -> GeoCoordinate {
    GeoCoordinate(
        latitude: origin.latitude + metres / GreatCircle.earthRadius * 180 / .pi,
        longitude: origin.longitude)
}

@Suite struct GeoRegionMonitorTests {
    @Test func aNoisyNMEAWalkInAndOutGivesOneEnterAndOneExit() throws {
        // 1 fix/s: approach from 400 m, dither across the 100 m edge on the way in, stay, dither on the
        // way out, then leave for good. The noise is +-30 m (under the 50 m margin).
        var generator = SplitMix64(seed: 3)
        var distances: [Double] = []
        for second in 0..<300 {
            var d: Double
            switch second {
            case 0..<60: d = 400 - Double(second) * 5  // 400 -> 105
            case 60..<120: d = 100  // at the edge
            case 120..<180: d = 20
            case 180..<240: d = 100
            default: d = 100 + Double(second - 240) * 10  // out to 690 m
            }
            d += Double.random(in: -30...30, using: &generator)
            distances.append(abs(d))
        }
        let start = 1_767_225_600.0
        let log = distances.enumerated().flatMap { second, d in
            let fix = GeoFix(time: start + Double(second), coordinate: north(of: store, d))
            return [NMEAWriter.rmc(fix), NMEAWriter.gga(fix)]
        }
        var stream = NMEAStream()
        var monitor = try GeoRegionMonitor(configuration: .init(exitMargin: 50, exitDelay: 10))
        try monitor.add(GeoRegion(identifier: "carnaby", center: store, radius: 100))
        var events: [GeoRegionEvent] = []
        for line in log { if let fix = stream.feed(line) { events += monitor.observe(fix) } }
        #expect(stream.statistics.fixes == 300)
        #expect(events.map(\.kind) == [.enter, .exit], "\(events)")
        let enter = try #require(events.first)
        #expect(distances[Int(enter.time - start)] <= 100)
        #expect(distances[..<Int(enter.time - start)].allSatisfy { $0 > 100 })
        // The exit: 10 s after the first fix beyond 150 m from which the walk never came back within 150 m.
        let lastWithin = distances.lastIndex { $0 <= 150 }!
        #expect(events.last!.time == start + Double(lastWithin + 1) + 10)
        #expect(monitor.insideRegions.isEmpty)
    }

    @Test func exitNeedsTheMarginForTheWholeDelay() throws {
        var monitor = try GeoRegionMonitor(configuration: .init(exitMargin: 20, exitDelay: 5))
        try monitor.add(GeoRegion(identifier: "a", center: store, radius: 50))
        func at(_ t: Double, _ d: Double) -> [GeoRegionEvent] {
            monitor.observe(GeoFix(time: t, coordinate: north(of: store, d)))
        }
        #expect(at(0, 60) == [])
        #expect(at(1, 49) == [GeoRegionEvent(kind: .enter, identifier: "a", time: 1)])
        #expect(at(2, 69) == [])  // beyond the radius, within the margin: still inside
        #expect(at(3, 71) == [])  // beyond the margin: the delay starts
        #expect(at(7, 200) == [])
        #expect(at(7.5, 65) == [])  // back within the margin before the delay ran out (at 8)
        #expect(at(9, 300) == [])
        #expect(monitor.isInside("a"))
        #expect(monitor.advance(to: 13.99) == [])
        #expect(monitor.advance(to: 14) == [GeoRegionEvent(kind: .exit, identifier: "a", time: 14)])
        #expect(!monitor.isInside("a"))
        // Noticed late: stamped at the deadline, before the entry the late fix causes.
        #expect(at(20, 0).map(\.kind) == [.enter])
        #expect(at(21, 500) == [])
        #expect(
            at(100, 0) == [
                GeoRegionEvent(kind: .exit, identifier: "a", time: 26),
                GeoRegionEvent(kind: .enter, identifier: "a", time: 100),
            ])
    }

    @Test func radiusIsClampedAndRegionsAreReplacedAndRemoved() throws {
        var monitor = try GeoRegionMonitor(
            configuration: .init(maximumRadius: 200, exitMargin: 0, exitDelay: 0))
        try monitor.add(GeoRegion(identifier: "big", center: store, radius: 50_000))
        #expect(monitor.regions.first?.radius == 200)
        #expect(monitor.observe(GeoFix(time: 0, coordinate: north(of: store, 300))) == [])
        #expect(
            monitor.observe(GeoFix(time: 1, coordinate: north(of: store, 150))).map(\.kind) == [.enter])
        // Moving a region keeps its state; the next fix decides.
        try monitor.add(GeoRegion(identifier: "big", center: north(of: store, 5_000), radius: 100))
        #expect(monitor.count == 1)
        #expect(
            monitor.observe(GeoFix(time: 2, coordinate: north(of: store, 150))).map(\.kind) == [.exit])
        monitor.remove("big")
        #expect(monitor.observe(GeoFix(time: 3, coordinate: north(of: store, 5_000))) == [])
        #expect(monitor.count == 0)
        #expect(throws: InvalidGeoRegion.self) {
            try monitor.add(
                GeoRegion(identifier: "x", center: GeoCoordinate(latitude: 91, longitude: 0), radius: 10))
        }
        #expect(throws: InvalidGeoRegion.self) {
            try monitor.add(GeoRegion(identifier: "x", center: store, radius: -.infinity))
        }
        #expect(throws: InvalidGeoRegion.self) {
            try GeoRegionMonitor(configuration: .init(exitDelay: .nan))
        }
        // Fixes out of order or invalid change nothing.
        #expect(monitor.observe(GeoFix(time: 1, coordinate: store)) == [])
        #expect(
            monitor.observe(GeoFix(time: 9, coordinate: GeoCoordinate(latitude: .nan, longitude: 0)))
                == [])
    }

    /// The grid finds exactly the regions a scan of all of them finds, across the 180th meridian and
    /// near a pole too.
    @Test func gridAgreesWithAFullScan() throws {
        var generator = SplitMix64(seed: 11)
        for center in [
            store, GeoCoordinate(latitude: -16.5, longitude: 179.99),
            GeoCoordinate(latitude: 89.97, longitude: 0),
        ] {
            var monitor = try GeoRegionMonitor(configuration: .init(exitMargin: 0, exitDelay: 0))
            var regions: [GeoRegion] = []
            for index in 0..<2_000 {
                let region = GeoRegion(
                    identifier: "r\(index)",
                    center: GeoCoordinate(
                        latitude: min(90, center.latitude + Double.random(in: -0.05...0.05, using: &generator)),
                        longitude: wrap(center.longitude + Double.random(in: -0.1...0.1, using: &generator))),
                    radius: Double.random(in: 10...3_000, using: &generator))
                regions.append(region)
                try monitor.add(region)
            }
            var mismatches: [String] = []
            for step in 0..<200 {
                let point = GeoCoordinate(
                    latitude: min(90, center.latitude + Double.random(in: -0.05...0.05, using: &generator)),
                    longitude: wrap(center.longitude + Double.random(in: -0.1...0.1, using: &generator)))
                _ = monitor.observe(GeoFix(time: Double(step), coordinate: point))
                let expected = regions.filter { GreatCircle.distance(point, $0.center) <= $0.radius }.map(
                    \.identifier)
                // With no margin and no delay, being inside is exactly being within the radius.
                if monitor.insideRegions != expected.sorted() {
                    mismatches.append("\(center) step \(step)")
                }
            }
            #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        }
    }
}
