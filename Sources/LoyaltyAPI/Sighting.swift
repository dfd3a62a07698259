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
    /// The beacon's Eddystone-TLM, heard from the same advertiser; absent when it sends none (or an encrypted one).
    public var tlm: SightingTelemetry?

    public init(eid: String, heardAt: Date, rssi: Int? = nil, tlm: SightingTelemetry? = nil) {
        self.eid = eid
        self.heardAt = heardAt
        self.rssi = rssi
        self.tlm = tlm
    }

    public init(
        uuid: UUID, major: UInt16, minor: UInt16, heardAt: Date, rssi: Int? = nil, tlm: SightingTelemetry? = nil
    ) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.heardAt = heardAt
        self.rssi = rssi
        self.tlm = tlm
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case eid, uuid, major, minor, rssi, tlm
        case heardAt = "heard_at"
    }
}

/// An Eddystone-TLM (version 0) frame's readings, as a sighting carries them: each may be absent; battery 0 is the
/// frame's "not measured" (temperature 0x8000 is: leave it out).
public struct SightingTelemetry: Codable, Sendable, Equatable {
    /// Battery voltage, mV; 0: not measured (mains powered).
    public var batteryMillivolts: Int?
    /// °C.
    public var temperature: Double?
    /// Advertising PDUs sent since power-up or reboot.
    public var advertisingCount: Int64?
    /// Time since power-up or reboot (the frame counts 0.1 s).
    public var uptimeSeconds: Double?

    public init(
        batteryMillivolts: Int? = nil, temperature: Double? = nil, advertisingCount: Int64? = nil,
        uptimeSeconds: Double? = nil
    ) {
        self.batteryMillivolts = batteryMillivolts
        self.temperature = temperature
        self.advertisingCount = advertisingCount
        self.uptimeSeconds = uptimeSeconds
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case temperature
        case batteryMillivolts = "battery_mv"
        case advertisingCount = "advertising_count"
        case uptimeSeconds = "uptime_seconds"
    }

    /// The ranges a TLM v0 frame can carry.
    func validate(field: String) throws(ValidationError) {
        if let battery = batteryMillivolts, !(0...65535).contains(battery) {
            throw ValidationError(field: "\(field).battery_mv", message: "must be 0 (not measured) to 65535 (mV)")
        }
        if let temperature, !(temperature.isFinite && (-128...128).contains(temperature)) {
            throw ValidationError(field: "\(field).temperature", message: "must be -128 to 128 (°C)")
        }
        if let count = advertisingCount, !(0...Int64(UInt32.max)).contains(count) {
            throw ValidationError(field: "\(field).advertising_count", message: "must be 0 to 4294967295")
        }
        if let uptime = uptimeSeconds, !(uptime.isFinite && (0...Double(UInt32.max) / 10).contains(uptime)) {
            throw ValidationError(field: "\(field).uptime_seconds", message: "must be 0 to 429496729.5 (s)")
        }
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
            try sighting.tlm?.validate(field: "\(field).tlm")
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
