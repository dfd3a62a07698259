import Foundation

/// `GET /v1/retailer/eid-params`: what a beacon needs for the Eddystone-EID spec's key exchange with this service:
/// the service's X25519 public key for this retailer (write it to the beacon) and the exponents it accepts.
public struct EIDParameters: Codable, Sendable, Equatable {
    /// 64 hex digits.
    public var servicePublicKey: String
    public var minExponent: UInt8
    public var maxExponent: UInt8

    public init(servicePublicKey: String, minExponent: UInt8 = 0, maxExponent: UInt8 = 15) {
        self.servicePublicKey = servicePublicKey
        self.minExponent = minExponent
        self.maxExponent = maxExponent
    }

    public enum CodingKeys: String, CodingKey {
        case servicePublicKey = "service_public_key"
        case minExponent = "min_exponent"
        case maxExponent = "max_exponent"
    }
}

/// `POST /v1/retailer/fleet/{major}/{minor}/eid-registration`: a beacon that made its identity key itself, by the
/// spec's key exchange: its public key, the service public key it was given, and the EID it broadcast at `counter`
/// (its clock then) with exponent K. The service derives the same identity key and accepts only if that EID matches.
public struct EIDRegistrationRequest: RequestBody, Equatable {
    /// 64 hex digits: the beacon's X25519 public key.
    public var beaconPublicKey: String
    /// 64 hex digits: the service public key written to the beacon (`GET /v1/retailer/eid-params`).
    public var servicePublicKey: String
    /// 16 hex digits: the EID the beacon broadcast when its clock read `counter`.
    public var firstEID: String
    /// The beacon's time counter (seconds) when it broadcast `first_eid`: now, as far as the service is concerned.
    public var counter: UInt32
    public var exponent: UInt8?
    public var form: SecureBeaconForm?

    public init(
        beaconPublicKey: String, servicePublicKey: String, firstEID: String, counter: UInt32, exponent: UInt8? = nil,
        form: SecureBeaconForm? = nil
    ) {
        self.beaconPublicKey = beaconPublicKey
        self.servicePublicKey = servicePublicKey
        self.firstEID = firstEID
        self.counter = counter
        self.exponent = exponent
        self.form = form
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case counter, exponent, form
        case beaconPublicKey = "beacon_public_key"
        case servicePublicKey = "service_public_key"
        case firstEID = "first_eid"
    }

    public func validate() throws(ValidationError) {
        for (key, field) in [(beaconPublicKey, "beacon_public_key"), (servicePublicKey, "service_public_key")] {
            guard key.utf8.count == 64, Hex.bytes(key) != nil else {
                throw ValidationError(field: field, message: "must be 64 hex digits (an X25519 public key)")
            }
        }
        guard firstEID.utf8.count == 16, Hex.bytes(firstEID) != nil else {
            throw ValidationError(field: "first_eid", message: "must be 16 hex digits (the EID the beacon broadcast)")
        }
        if let exponent, exponent > 15 { throw ValidationError(field: "exponent", message: "must be 0 to 15") }
    }
}

/// The answer to an accepted key exchange: the beacon's clock as the service now keeps it, and the service public key
/// it was registered with. No identity key: the beacon made it, and it never travels.
public struct EIDRegistration: Codable, Sendable, Equatable {
    public var major: UInt16
    public var minor: UInt16
    public var exponent: UInt8
    public var form: SecureBeaconForm
    public var uuid: UUID
    /// The beacon's time counter at `counterAt`.
    public var counter: UInt32
    public var counterAt: Date
    public var servicePublicKey: String

    public init(
        major: UInt16, minor: UInt16, exponent: UInt8, form: SecureBeaconForm, uuid: UUID, counter: UInt32,
        counterAt: Date, servicePublicKey: String
    ) {
        self.major = major
        self.minor = minor
        self.exponent = exponent
        self.form = form
        self.uuid = uuid
        self.counter = counter
        self.counterAt = counterAt
        self.servicePublicKey = servicePublicKey
    }

    public enum CodingKeys: String, CodingKey {
        case major, minor, exponent, form, uuid, counter
        case counterAt = "counter_at"
        case servicePublicKey = "service_public_key"
    }
}
