import Foundation

/// `GET /v1/directory`: every retailer, small enough for every device to hold (no offers), so that a device decides
/// for itself whose offers it carries: the retailers with a store near it, those whose UUID its scan has heard, and
/// those its shopper follows. Their offers come from `GET /v1/catalog?retailers=...` or `?bucket=B&buckets=N`.
/// The ETag answers 304 while nothing in the catalog changed.
public struct RetailerDirectory: Codable, Sendable, Equatable {
    /// How many buckets the retailers are spread over now: a device that heard a UUID asks for the bucket the UUID
    /// is in (`bucket` below) with this count, and gets every retailer of it, not only the one it heard.
    public var buckets: Int
    public var serverTime: Date
    public var retailers: [DirectoryRetailer]

    public init(buckets: Int, serverTime: Date, retailers: [DirectoryRetailer]) {
        self.buckets = buckets
        self.serverTime = serverTime
        self.retailers = retailers
    }

    public enum CodingKeys: String, CodingKey {
        case buckets
        case serverTime = "server_time"
        case retailers
    }

    /// The most bytes a directory can take, for a client to refuse a longer answer: 64 MiB holds 100,000
    /// retailers with several stores each.
    public static let maximumBytes = 64 << 20
}

/// One retailer of the directory.
public struct DirectoryRetailer: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String
    public var uuid: UUID
    /// Its bucket among `RetailerDirectory.buckets`.
    public var bucket: Int
    /// The catalog version of its latest change (to itself, an offer or a store): a device whose copy of the
    /// retailer is at this version has nothing to fetch for it.
    public var head: Int64
    /// Its live stores' geofences: where a device is near it.
    public var stores: [DirectoryStore]

    public init(id: UUID, name: String, uuid: UUID, bucket: Int, head: Int64, stores: [DirectoryStore]) {
        self.id = id
        self.name = name
        self.uuid = uuid
        self.bucket = bucket
        self.head = head
        self.stores = stores
    }
}

/// A store's geofence, as the directory gives it (names and ids come with the retailer's catalog).
public struct DirectoryStore: Codable, Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var radiusMetres: Int

    public init(latitude: Double, longitude: Double, radiusMetres: Int) {
        self.latitude = latitude
        self.longitude = longitude
        self.radiusMetres = radiusMetres
    }

    public enum CodingKeys: String, CodingKey {
        case latitude, longitude
        case radiusMetres = "radius_m"
    }
}
