import Foundation

/// `PUT /v1/retailer/stores/{store_id}`: a store and its geofence, the circle in which shoppers'
/// devices say they are at the store.
public struct StoreDraft: RequestBody, Equatable {
    public var name: String
    /// WGS 84 degrees, -90...90.
    public var latitude: Double
    /// WGS 84 degrees, -180...180.
    public var longitude: Double
    /// The geofence radius in metres, 10...10,000.
    public var radiusMetres: Int

    public init(name: String, latitude: Double, longitude: Double, radiusMetres: Int) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.radiusMetres = radiusMetres
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, latitude, longitude
        case radiusMetres = "radius_m"
    }

    public func validate() throws(ValidationError) {
        try Validation.text(name, field: "name", length: Validation.nameLength)
        try Validation.latitude(latitude, field: "latitude")
        try Validation.longitude(longitude, field: "longitude")
        guard Validation.storeRadiusMetres.contains(radiusMetres) else {
            throw ValidationError(
                field: "radius_m",
                message:
                    "must be \(Validation.storeRadiusMetres.lowerBound) to \(Validation.storeRadiusMetres.upperBound) metres"
            )
        }
    }
}

/// A store as the server keeps it and the catalog serves it.
public struct RetailStore: Codable, Sendable, Equatable, Identifiable {
    /// The server's id of this store row (a tombstone names it).
    public var id: UUID
    public var retailerID: UUID
    /// The retailer's own name for the store in paths, e.g. `oxford-street`.
    public var storeID: String
    public var name: String
    public var latitude: Double
    public var longitude: Double
    public var radiusMetres: Int
    public var updatedAt: Date

    public init(
        id: UUID, retailerID: UUID, storeID: String, name: String, latitude: Double, longitude: Double,
        radiusMetres: Int, updatedAt: Date
    ) {
        self.id = id
        self.retailerID = retailerID
        self.storeID = storeID
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.radiusMetres = radiusMetres
        self.updatedAt = updatedAt
    }

    public enum CodingKeys: String, CodingKey {
        case id
        case retailerID = "retailer_id"
        case storeID = "store_id"
        case name, latitude, longitude
        case radiusMetres = "radius_m"
        case updatedAt = "updated_at"
    }
}

/// `GET /v1/retailer/stores`.
public struct StoreList: Codable, Sendable, Equatable {
    public var stores: [RetailStore]

    public init(stores: [RetailStore]) { self.stores = stores }
}

/// `GET /v1/catalog?near=LAT,LON&radius_km=R`: the part of the catalog around a point.
public struct CatalogArea: Sendable, Hashable {
    public static let defaultRadiusKilometres = 10.0
    /// Up to half the Earth's circumference.
    public static let radiusKilometres: ClosedRange<Double> = 0.01...20_000

    public var latitude: Double
    public var longitude: Double
    public var radiusKilometres: Double

    public init(
        latitude: Double, longitude: Double, radiusKilometres: Double = defaultRadiusKilometres
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.radiusKilometres = radiusKilometres
    }

    /// From the query parameters' text.
    public init(near: String, radiusKilometres: String?) throws(ValidationError) {
        let parts = near.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]) else {
            throw ValidationError(
                field: "near", message: "must be LAT,LON in decimal degrees, e.g. 51.5136,-0.1365")
        }
        try Validation.latitude(latitude, field: "near")
        try Validation.longitude(longitude, field: "near")
        var radius = Self.defaultRadiusKilometres
        if let radiusKilometres {
            guard let value = Double(radiusKilometres), Self.radiusKilometres.contains(value) else {
                throw ValidationError(
                    field: "radius_km",
                    message:
                        "must be a number of kilometres from \(Self.radiusKilometres.lowerBound) to \(Int(Self.radiusKilometres.upperBound))"
                )
            }
            radius = value
        }
        self.init(latitude: latitude, longitude: longitude, radiusKilometres: radius)
    }

    /// The query parameters, as `init(near:radiusKilometres:)` reads them.
    public var queryItems: [String: String] {
        ["near": "\(latitude),\(longitude)", "radius_km": "\(radiusKilometres)"]
    }
}

extension Validation {
    public static let storeRadiusMetres = 10...10_000
    /// Store ids in paths: letters, digits, `.`, `_` and `-`, but not `.` or `..`, which URL libraries
    /// resolve away (RFC 3986 dot segments), so such a store could not be addressed again.
    public static let storeIDLength = 1...64

    public static func storeID(_ text: String, field: String = "store_id") throws(ValidationError)
        -> String
    {
        guard storeIDLength.contains(text.count), text != ".", text != "..",
            text.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                        || "._-".unicodeScalars.contains($0))
            })
        else {
            throw ValidationError(
                field: field,
                message: "must be 1 to 64 letters, digits, '.', '_' or '-', not . or .. (e.g. oxford-street)")
        }
        return text
    }

    public static func latitude(_ value: Double, field: String) throws(ValidationError) {
        guard value.isFinite, (-90...90).contains(value) else {
            // `near` holds both numbers: say which one is wrong.
            throw ValidationError(
                field: field, message: field == "latitude" ? "must be from -90 to 90 degrees" : "needs a latitude from -90 to 90 degrees")
        }
    }

    public static func longitude(_ value: Double, field: String) throws(ValidationError) {
        guard value.isFinite, (-180...180).contains(value) else {
            throw ValidationError(
                field: field,
                message: field == "longitude" ? "must be from -180 to 180 degrees" : "needs a longitude from -180 to 180 degrees")
        }
    }
}
