import Beacons
import Foundation
import Geofencing
import Testing

/// The spherical law of cosines: a different formula for the same distance, to check the haversine.
private func lawOfCosines(_ a: GeoCoordinate, _ b: GeoCoordinate) -> Double {
    let (lat1, lat2) = (a.latitude * .pi / 180, b.latitude * .pi / 180)
    let deltaLongitude = (b.longitude - a.longitude) * .pi / 180
    return GreatCircle.earthRadius
        * acos(sin(lat1) * sin(lat2) + cos(lat1) * cos(lat2) * cos(deltaLongitude))
}

/// Vincenty's formula on the sphere (atan2 form): a third way, accurate at every distance.
private func vincentySphere(_ a: GeoCoordinate, _ b: GeoCoordinate) -> Double {
    let (lat1, lat2) = (a.latitude * .pi / 180, b.latitude * .pi / 180)
    let deltaLongitude = (b.longitude - a.longitude) * .pi / 180
    let y = hypot(
        cos(lat2) * sin(deltaLongitude),
        cos(lat1) * sin(lat2) - sin(lat1) * cos(lat2) * cos(deltaLongitude))
    let x = sin(lat1) * sin(lat2) + cos(lat1) * cos(lat2) * cos(deltaLongitude)
    return GreatCircle.earthRadius * atan2(y, x)
}

private func dms(_ degrees: Double, _ minutes: Double, _ seconds: Double) -> Double {
    degrees + minutes / 60 + seconds / 3600
}

@Suite struct GreatCircleTests {
    let bigBen = GeoCoordinate(latitude: 51.500729, longitude: -0.124625)
    let stPauls = GeoCoordinate(latitude: 51.513845, longitude: -0.098351)

    @Test func londonLandmarksAgreeWithTwoOtherFormulasToTheMetre() {
        let distance = GreatCircle.distance(bigBen, stPauls)
        #expect(abs(distance - lawOfCosines(bigBen, stPauls)) < 1)
        #expect(abs(distance - vincentySphere(bigBen, stPauls)) < 0.001)
        #expect(Int(distance.rounded()) == 2331)
        #expect(GreatCircle.distance(stPauls, bigBen) == distance)
    }

    /// Movable Type's published example (Veness, "Calculate distance, bearing and more between
    /// Latitude/Longitude points"): Land's End to John o' Groats is 968.9 km on a sphere of 6,371 km.
    @Test func landsEndToJohnOGroatsMatchesThePublishedFigure() {
        let landsEnd = GeoCoordinate(latitude: dms(50, 3, 59), longitude: -dms(5, 42, 53))
        let johnOGroats = GeoCoordinate(latitude: dms(58, 38, 38), longitude: -dms(3, 4, 12))
        let onTheirSphere =
            GreatCircle.distance(landsEnd, johnOGroats) * 6_371_000 / GreatCircle.earthRadius
        #expect(abs(onTheirSphere / 1000 - 968.9) < 0.05)
    }

    @Test func exactArcsOfTheSphere() {
        let equator = GeoCoordinate(latitude: 0, longitude: 0)
        // One minute of arc along a meridian: R * pi / 10,800 (1,853.2 m; the nautical mile is 1,852 m).
        let minute = GreatCircle.distance(equator, GeoCoordinate(latitude: 1.0 / 60, longitude: 0))
        #expect(abs(minute - GreatCircle.earthRadius * .pi / 10_800) < 1e-6)
        let quarter = GreatCircle.distance(equator, GeoCoordinate(latitude: 90, longitude: 0))
        #expect(abs(quarter - .pi / 2 * GreatCircle.earthRadius) < 1e-6)
        #expect(Int(quarter.rounded()) == 10_007_557)
        // Antipodes, and across the 180th meridian the short way.
        #expect(
            abs(
                GreatCircle.distance(equator, GeoCoordinate(latitude: 0, longitude: 180)) - .pi
                    * GreatCircle.earthRadius)
                < 0.01)
        let across = GreatCircle.distance(
            GeoCoordinate(latitude: 0, longitude: 179.999),
            GeoCoordinate(latitude: 0, longitude: -179.999))
        #expect(abs(across - 0.002 * .pi / 180 * GreatCircle.earthRadius) < 0.01)
        #expect(GreatCircle.distance(bigBen, bigBen) == 0)
    }

    @Test func boundingBoxHoldsEveryPointWithinTheRadius() {
        for center in [
            bigBen, GeoCoordinate(latitude: -33.86, longitude: 151.21),
            GeoCoordinate(latitude: 64.8, longitude: 179.99),
            GeoCoordinate(latitude: 89.99, longitude: 10),
        ] {
            let radius = 5_000.0
            let box = BoundingBox(center: center, radius: radius)
            var generator = SplitMix64(seed: 7)
            for _ in 0..<2_000 {
                let point = GeoCoordinate(
                    latitude: max(
                        -90, min(90, center.latitude + Double.random(in: -0.1...0.1, using: &generator))),
                    longitude: wrap(center.longitude + Double.random(in: -0.5...0.5, using: &generator)))
                if GreatCircle.distance(center, point) <= radius {
                    #expect(box.contains(point), "\(center) \(point)")
                }
            }
        }
        let wrapped = BoundingBox(center: GeoCoordinate(latitude: 0, longitude: 179.99), radius: 5_000)
        #expect(wrapped.wrapsLongitude)
        let polar = BoundingBox(center: GeoCoordinate(latitude: 89.99, longitude: 0), radius: 5_000)
        #expect(polar.minLongitude == -180 && polar.maxLongitude == 180)
        let london = BoundingBox(center: bigBen, radius: 1_000)
        #expect(!london.contains(stPauls))
        #expect(
            abs(
                (london.maxLatitude - london.minLatitude) / 2 - 1_000 / GreatCircle.earthRadius * 180 / .pi)
                < 1e-12)
    }

    @Test func parsesLatLonText() {
        #expect(
            GeoCoordinate(parsing: "51.5007,-0.1246")
                == GeoCoordinate(latitude: 51.5007, longitude: -0.1246))
        #expect(GeoCoordinate(parsing: " 1 , 2 ") == GeoCoordinate(latitude: 1, longitude: 2))
        for bad in ["", "51.5", "91,0", "0,181", "a,b", "1,2,3", "nan,0", "1,"] {
            #expect(GeoCoordinate(parsing: bad) == nil, "\(bad)")
        }
    }
}

func wrap(_ longitude: Double) -> Double {
    longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
}
