import Foundation

/// A beacon region: every beacon of a UUID, of one major within it, or exactly one beacon; or, for Eddystone-UID
/// beacons, every beacon of a namespace or exactly one (namespace and instance).
public struct BeaconIdentityConstraint: Hashable, Sendable, CustomStringConvertible {
    /// An iBeacon region's UUID; an Eddystone region's namespace in its first 10 bytes, the rest zero.
    public var uuid: UUID
    public var major: UInt16?
    /// Only meaningful when `major` is set.
    public var minor: UInt16?
    /// Whether this is a region of Eddystone-UID beacons (then `major` and `minor` are nil).
    public private(set) var isEddystone = false
    /// An Eddystone region of one beacon: its instance's 48 bits.
    public private(set) var instance: UInt64?

    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        precondition(minor == nil || major != nil, "a region with a minor needs a major")
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// A region of the Eddystone-UID beacons of `namespace`, or of the one of `instance` (6 bytes) in it.
    public init(namespace: EddystoneNamespace, instance: [UInt8]? = nil) {
        precondition(instance == nil || instance!.count == 6, "an Eddystone instance is 6 bytes")
        let uid = EddystoneUID(namespace: namespace, instance: instance ?? [0, 0, 0, 0, 0, 0])
        uuid = BeaconIdentity(eddystoneUID: EddystoneUID(namespace: namespace, instance: [0, 0, 0, 0, 0, 0])).uuid
        isEddystone = true
        self.instance = instance.map { _ in uid.instanceBits }
    }

    /// An Eddystone region's namespace; nil for an iBeacon region.
    public var namespace: EddystoneNamespace? {
        isEddystone ? BeaconIdentity(uuid: uuid, major: 0, minor: 0).eddystoneUID.namespace : nil
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        /// Not exactly one beacon (`BeaconIdentity(parsing:)`).
        case notABeacon(String)

        public var description: String {
            switch self {
            case .malformed(let text):
                "'\(text)' is not a region: use UUID, UUID:MAJOR or UUID:MAJOR:MINOR (major and minor 0...65535),"
                    + " or an Eddystone NAMESPACE or NAMESPACE:INSTANCE (20 and 12 hex digits)"
            case .notABeacon(let text): "'\(text)' is not a beacon: use UUID:MAJOR:MINOR (major and minor 0...65535)"
            }
        }
    }

    /// Parses `UUID`, `UUID:MAJOR` or `UUID:MAJOR:MINOR`, or Eddystone's `NAMESPACE` or `NAMESPACE:INSTANCE`.
    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts[0].count == 20 {
            func hex(_ part: Substring, count: Int) -> [UInt8]? {
                guard part.count == count * 2, part.allSatisfy(\.isHexDigit) else { return nil }
                return [UInt8](pastedHex: String(part))
            }
            guard parts.count <= 2, let namespace = hex(parts[0], count: 10).flatMap(EddystoneNamespace.init(bytes:))
            else { throw .malformed(text) }
            if parts.count == 2 {
                guard let instance = hex(parts[1], count: 6) else { throw .malformed(text) }
                self.init(namespace: namespace, instance: instance)
            } else {
                self.init(namespace: namespace)
            }
            return
        }
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

    /// Whether `identity` is in the region; an Eddystone region's identities are those of Eddystone-UID frames.
    public func matches(_ identity: BeaconIdentity) -> Bool {
        if isEddystone {
            let uid = identity.eddystoneUID
            return uid.namespace == namespace && (instance == nil || uid.instanceBits == instance)
        }
        return identity.uuid == uuid && (major == nil || identity.major == major)
            && (minor == nil || identity.minor == minor)
    }

    /// The form `init(parsing:)` reads.
    public var description: String {
        if let namespace {
            guard let instance else { return namespace.description }
            let uid = EddystoneUID(namespaceHigh: 0, namespaceLow: 0, instanceBits: instance)
            return namespace.description + ":" + uid.instance.hexText()
        }
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
