import Foundation

/// What a device heard of a secure beacon: an Eddystone EID (`eid`), or a rotating iBeacon (`uuid`, `major`,
/// `minor`: the EID's first 4 bytes under the retailer's UUID); when, and how loud.
public struct Sighting: Codable, Sendable, Equatable {
    /// 16 hex digits.
    public var eid: String?
    public var uuid: UUID?
    public var major: UInt16?
    public var minor: UInt16?
    public var heardAt: Date
    /// dBm.
    public var rssi: Int?

    public init(eid: String, heardAt: Date, rssi: Int? = nil) {
        self.eid = eid
        self.heardAt = heardAt
        self.rssi = rssi
    }

    public init(uuid: UUID, major: UInt16, minor: UInt16, heardAt: Date, rssi: Int? = nil) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.heardAt = heardAt
        self.rssi = rssi
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case eid, uuid, major, minor, rssi
        case heardAt = "heard_at"
    }
}

/// `POST /v1/sightings`: up to 100 sightings to resolve.
public struct SightingBatch: RequestBody, Equatable {
    public var sightings: [Sighting]

    public init(sightings: [Sighting]) { self.sightings = sightings }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case sightings
    }

    public static var elementFieldNames: [String: Set<String>] {
        ["sightings": Set(Sighting.CodingKeys.allCases.map(\.stringValue))]
    }

    public func validate() throws(ValidationError) {
        guard Validation.sightingsPerBatch.contains(sightings.count) else {
            throw ValidationError(
                field: "sightings",
                message: "must hold \(Validation.sightingsPerBatch.lowerBound) to "
                    + "\(Validation.sightingsPerBatch.upperBound) sightings")
        }
        for (index, sighting) in sightings.enumerated() {
            let field = "sightings[\(index)]"
            let iBeacon = [sighting.uuid != nil, sighting.major != nil, sighting.minor != nil]
            if let eid = sighting.eid {
                guard eid.utf8.count == 16, Hex.bytes(eid) != nil else {
                    throw ValidationError(field: "\(field).eid", message: "must be 16 hex digits")
                }
                guard !iBeacon.contains(true) else {
                    throw ValidationError(field: field, message: "must hold an eid, or a uuid, major and minor: not both")
                }
            } else if iBeacon.contains(false) {
                throw ValidationError(field: field, message: "must hold an eid, or a uuid, major and minor")
            }
            try Validation.timestamp(sighting.heardAt, field: "\(field).heard_at")
            if let rssi = sighting.rssi, !(-127...20).contains(rssi) {
                throw ValidationError(field: "\(field).rssi", message: "must be -127 to 20 (dBm)")
            }
        }
    }
}

/// A sighting the service resolved: the beacon it was, whose, and until when its identifier holds.
public struct ResolvedBeacon: Codable, Sendable, Equatable {
    /// The sighting's position in the batch.
    public var index: Int
    public var retailerID: UUID
    public var retailerName: String
    /// `MAJOR:MINOR`, the beacon's name in the retailer's fleet.
    public var beacon: String
    public var major: UInt16
    public var minor: UInt16
    /// The end of the EID window the sighting was resolved in.
    public var validUntil: Date

    public init(
        index: Int, retailerID: UUID, retailerName: String, major: UInt16, minor: UInt16, validUntil: Date
    ) {
        self.index = index
        self.retailerID = retailerID
        self.retailerName = retailerName
        beacon = "\(major):\(minor)"
        self.major = major
        self.minor = minor
        self.validUntil = validUntil
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case index, beacon, major, minor
        case retailerID = "retailer_id"
        case retailerName = "retailer_name"
        case validUntil = "valid_until"
    }
}

/// The answer to `POST /v1/sightings`: the sightings that resolved. One that did not is absent, whether its
/// identifier is unknown, stale, or another retailer's beyond its window: resolution is no oracle.
public struct SightingResolution: Codable, Sendable, Equatable {
    public var beacons: [ResolvedBeacon]

    public init(beacons: [ResolvedBeacon]) { self.beacons = beacons }
}
