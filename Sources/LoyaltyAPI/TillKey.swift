import Foundation

/// `POST /v1/retailer/till-keys`: a key for one till, named so that an acceptance says where it happened.
public struct TillKeyDraft: RequestBody, Equatable {
    public var name: String

    public init(name: String) { self.name = name }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name
    }

    public func validate() throws(ValidationError) {
        try Validation.text(name, field: "name", length: Validation.tillNameLength)
    }
}

/// A till key as listed; the key itself is shown only once, in `TillKeyCredentials`.
public struct TillKey: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: UUID, name: String, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    public enum CodingKeys: String, CodingKey {
        case id, name
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
    }
}

/// The answer to creating a till key: `till_key` (`lt_...`) is shown this once.
public struct TillKeyCredentials: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    public var tillKey: String

    public init(id: UUID, name: String, createdAt: Date, tillKey: String) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.tillKey = tillKey
    }

    public enum CodingKeys: String, CodingKey {
        case id, name
        case createdAt = "created_at"
        case tillKey = "till_key"
    }
}

/// `GET /v1/retailer/till-keys`: live and revoked keys, oldest first.
public struct TillKeyList: Codable, Sendable, Equatable {
    public var tillKeys: [TillKey]

    public init(tillKeys: [TillKey]) { self.tillKeys = tillKeys }

    public enum CodingKeys: String, CodingKey {
        case tillKeys = "till_keys"
    }
}

/// `POST /v1/till/check` and `POST /v1/till/accept`: the code as the cashier typed it. In the body, not the
/// URL, so it stays out of access logs.
public struct TillCodeRequest: RequestBody, Equatable {
    public var code: String

    public init(code: String) { self.code = code }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case code
    }

    public func validate() throws(ValidationError) {
        _ = try RedemptionCode.normalized(code)
    }
}

/// A redemption code as the till sees it: the offer it is for, and whether it was accepted already.
public struct TillCode: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        /// Not accepted yet: `accept` will take it.
        case valid
        /// Accepted before, at `accepted_at` by `accepted_till`.
        case accepted
    }

    public var code: String
    public var status: Status
    public var offerID: UUID
    public var major: UInt16
    public var minor: UInt16
    public var title: String
    public var redeemedAt: Date
    public var acceptedAt: Date?
    public var acceptedTill: String?

    public init(
        code: String, status: Status, offerID: UUID, major: UInt16, minor: UInt16, title: String,
        redeemedAt: Date, acceptedAt: Date? = nil, acceptedTill: String? = nil
    ) {
        self.code = code
        self.status = status
        self.offerID = offerID
        self.major = major
        self.minor = minor
        self.title = title
        self.redeemedAt = redeemedAt
        self.acceptedAt = acceptedAt
        self.acceptedTill = acceptedTill
    }

    public enum CodingKeys: String, CodingKey {
        case code, status
        case offerID = "offer_id"
        case major, minor, title
        case redeemedAt = "redeemed_at"
        case acceptedAt = "accepted_at"
        case acceptedTill = "accepted_till"
    }
}

/// The redemption codes people type: symbols that are not confused when read aloud or written down.
public enum RedemptionCode {
    /// The digits 2-9 and the letters A-Z without I, L and O (no 0/O or 1/I/L pairs).
    public static let alphabet: [Character] = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    public static let maxLength = 32

    /// The code as stored: upper-cased, compatibility-normalised (full-width letters become ASCII), without
    /// spaces and dashes, so `k7m2-q9xp 4h` is `K7M2Q9XP4H`. A symbol no code holds (0, O, 1, I, L, or a
    /// letter of another script that looks like one) is refused with its position, never guessed at.
    public static func normalized(_ typed: String) throws(ValidationError) -> String {
        let folded = typed.precomposedStringWithCompatibilityMapping.uppercased()
        var code = ""
        for (position, character) in folded.enumerated() where character != "-" && !character.isWhitespace {
            guard alphabet.contains(character) else {
                let scalars = character.unicodeScalars.map { String(format: "U+%04X", $0.value) }.joined(separator: " ")
                let shown = character.isASCII && !(character.asciiValue! < 0x20 || character.asciiValue! == 0x7F)
                    ? "'\(character)'" : scalars
                throw ValidationError(
                    field: "code",
                    message:
                        "has \(shown) at position \(position + 1), which no code holds: codes use the digits 2-9 and "
                        + "the letters A-Z except I, L and O")
            }
            code.append(character)
        }
        guard (1...maxLength).contains(code.count) else {
            throw ValidationError(field: "code", message: "must hold 1 to \(maxLength) symbols")
        }
        return code
    }
}

extension Validation {
    public static let tillNameLength = 1...100
}
