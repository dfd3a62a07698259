import Foundation

/// How a secure beacon broadcasts its ephemeral identifier (EID).
public enum SecureBeaconForm: String, Codable, Sendable, CaseIterable {
    /// An Eddystone-EID frame: the 8-byte EID.
    case eddystone
    /// An iBeacon under the retailer's own UUID whose major and minor are the EID's first 4 bytes, so that
    /// monitoring by the retailer's UUID works as before.
    case ibeacon
}

/// `POST /v1/retailer/fleet/{major}/{minor}/secure`: the beacon's rotation period exponent (an EID lasts 2^K
/// seconds) and broadcast form; an empty body takes the defaults.
public struct SecureBeaconRequest: RequestBody, Equatable {
    /// 2^10 s, about 17 minutes: short enough that a capture is soon worthless, long enough for a visit.
    public static let defaultExponent: UInt8 = 10

    public var exponent: UInt8?
    public var form: SecureBeaconForm?

    public init(exponent: UInt8? = nil, form: SecureBeaconForm? = nil) {
        self.exponent = exponent
        self.form = form
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case exponent, form
    }

    public func validate() throws(ValidationError) {
        if let exponent, exponent > 15 { throw ValidationError(field: "exponent", message: "must be 0 to 15") }
    }
}

/// The answer to making a beacon secure, given once: what a beacon needs to broadcast its EIDs (the shared-key
/// configuration of the Eddystone-EID spec). The identity key is never shown again; asking again makes a new one.
public struct BeaconProvisioning: Codable, Sendable, Equatable {
    public var major: UInt16
    public var minor: UInt16
    /// 32 hex digits: the beacon's identity key.
    public var identityKey: String
    public var exponent: UInt8
    public var form: SecureBeaconForm
    /// The retailer's proximity UUID: the iBeacon form broadcasts under it.
    public var uuid: UUID
    /// The beacon's time counter (seconds) at `counterAt`; it counts one a second from there.
    public var counter: UInt32
    public var counterAt: Date

    public init(
        major: UInt16, minor: UInt16, identityKey: String, exponent: UInt8, form: SecureBeaconForm, uuid: UUID,
        counter: UInt32, counterAt: Date
    ) {
        self.major = major
        self.minor = minor
        self.identityKey = identityKey
        self.exponent = exponent
        self.form = form
        self.uuid = uuid
        self.counter = counter
        self.counterAt = counterAt
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case major, minor, exponent, form, uuid, counter
        case identityKey = "identity_key"
        case counterAt = "counter_at"
    }
}
