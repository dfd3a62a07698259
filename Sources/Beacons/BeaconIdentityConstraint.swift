import Foundation

/// A beacon region: every beacon of a UUID, of one major within it, or exactly one beacon.
public struct BeaconIdentityConstraint: Hashable, Sendable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16?
    /// Only meaningful when `major` is set.
    public var minor: UInt16?

    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        precondition(minor == nil || major != nil, "a region with a minor needs a major")
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        /// Not exactly one beacon (`BeaconIdentity(parsing:)`).
        case notABeacon(String)

        public var description: String {
            switch self {
            case .malformed(let text):
                "'\(text)' is not a region: use UUID, UUID:MAJOR or UUID:MAJOR:MINOR (major and minor 0...65535)"
            case .notABeacon(let text): "'\(text)' is not a beacon: use UUID:MAJOR:MINOR (major and minor 0...65535)"
            }
        }
    }

    /// Parses `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`.
    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let uuid = UUID(uuidString: String(parts[0])) else {
            throw .malformed(text)
        }
        var numbers: [UInt16] = []
        for part in parts.dropFirst() {
            guard let value = UInt16(part) else { throw .malformed(text) }
            numbers.append(value)
        }
        self.init(uuid: uuid, major: numbers.first, minor: numbers.count > 1 ? numbers[1] : nil)
    }

    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid && (major == nil || identity.major == major)
            && (minor == nil || identity.minor == minor)
    }

    /// The form `init(parsing:)` reads.
    public var description: String {
        var text = uuid.uuidString
        if let major { text += ":\(major)" }
        if let minor { text += ":\(minor)" }
        return text
    }
}

extension BeaconIdentity {
    /// Parses exactly one beacon, `UUID:MAJOR:MINOR`.
    public init(parsing text: String) throws(BeaconIdentityConstraint.ParseError) {
        guard let constraint = try? BeaconIdentityConstraint(parsing: text), let major = constraint.major,
            let minor = constraint.minor
        else { throw .notABeacon(text) }
        self.init(uuid: constraint.uuid, major: major, minor: minor)
    }
}
