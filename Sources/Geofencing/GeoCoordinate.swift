import Foundation

/// A point on the Earth in decimal degrees (WGS 84 latitude and longitude, as GPS reports them).
public struct GeoCoordinate: Hashable, Sendable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Latitude in -90...90 and longitude in -180...180, both finite.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude)
            && (-180...180).contains(longitude)
    }

    /// `LAT,LON` as typed on a command line or sent in a query, e.g. `51.5007,-0.1246`.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2,
            let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
            let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces))
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
        guard isValid else { return nil }
    }

    public var description: String { "\(latitude),\(longitude)" }
}

/// Distances on a sphere of the Earth's mean radius, by the haversine formula.
///
/// The sphere is off from the WGS 84 ellipsoid by up to about 0.5 %: a few metres across a store's
/// geofence, which is far below GPS noise, and it lets the server run the same formula in SQL.
public enum GreatCircle {
    /// The IUGG mean Earth radius R1 = (2a + b) / 3, in metres.
    public static let earthRadius = 6_371_008.8

    /// The great-circle distance in metres (haversine: well conditioned for short distances too).
    public static func distance(_ from: GeoCoordinate, _ to: GeoCoordinate) -> Double {
        let lat1 = from.latitude * .pi / 180
        let lat2 = to.latitude * .pi / 180
        let sinHalfLat = sin((lat2 - lat1) / 2)
        let sinHalfLon = sin((to.longitude - from.longitude) * .pi / 360)
        let h = sinHalfLat * sinHalfLat + cos(lat1) * cos(lat2) * sinHalfLon * sinHalfLon
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }
}

/// The latitude and longitude ranges that hold every point within a distance of a centre
/// (J. P. Matuschek, "Finding points within a distance of a latitude/longitude using bounding
/// coordinates"). Near a pole the box spans every longitude; across the 180th meridian the longitude
/// range wraps (`minLongitude > maxLongitude`).
public struct BoundingBox: Hashable, Sendable {
    public var minLatitude: Double
    public var maxLatitude: Double
    public var minLongitude: Double
    public var maxLongitude: Double

    public init(center: GeoCoordinate, radius: Double) {
        let angular = max(0, radius) / GreatCircle.earthRadius
        let latitude = center.latitude * .pi / 180
        let minLat = latitude - angular
        let maxLat = latitude + angular
        minLatitude = max(-90, minLat * 180 / .pi)
        maxLatitude = min(90, maxLat * 180 / .pi)
        guard minLat > -.pi / 2, maxLat < .pi / 2, angular < .pi / 2 else {
            minLongitude = -180
            maxLongitude = 180
            return
        }
        let deltaLongitude = asin(min(1, sin(angular) / cos(latitude))) * 180 / .pi
        var low = center.longitude - deltaLongitude
        var high = center.longitude + deltaLongitude
        if high - low >= 360 {
            (low, high) = (-180, 180)
        } else {
            if low < -180 { low += 360 }
            if high > 180 { high -= 360 }
        }
        minLongitude = low
        maxLongitude = high
    }

    /// Whether the longitude range crosses the 180th meridian.
    public var wrapsLongitude: Bool { minLongitude > maxLongitude }

    public func contains(_ point: GeoCoordinate) -> Bool {
        guard (minLatitude...maxLatitude).contains(point.latitude) else { return false }
        return wrapsLongitude
            ? point.longitude >= minLongitude || point.longitude <= maxLongitude
            : (minLongitude...maxLongitude).contains(point.longitude)
    }
}
