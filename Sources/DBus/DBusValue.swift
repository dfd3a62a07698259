/// A value read from a D-Bus message, in the wire's own types.
public indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case array([DBusValue])
    /// `a{..}`: the entries in message order.
    case dictionary([DictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    public struct DictionaryEntry: Hashable, Sendable {
        public let key: DBusValue
        public let value: DBusValue
    }

    /// The value inside a variant (itself for anything else).
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text): text
        default: nil
        }
    }

    /// Any integer that fits an Int.
    public var integer: Int? {
        switch unwrapped {
        case .byte(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        default: nil
        }
    }

    /// An `ay`.
    public var bytes: [UInt8]? {
        guard case .array(let elements) = unwrapped else { return nil }
        var bytes: [UInt8] = []
        for element in elements {
            guard case .byte(let byte) = element else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// A dictionary's value for a string key (`a{sv}`, `a{sa{sv}}`), or for an integer key (`a{qv}`).
    public subscript(key: String) -> DBusValue? {
        guard case .dictionary(let entries) = unwrapped else { return nil }
        return entries.first { $0.key.string == key }?.value
    }

    /// A dictionary's entries as (integer key, value) pairs, for `a{qv}` such as ManufacturerData.
    public var integerKeyedEntries: [(key: Int, value: DBusValue)] {
        guard case .dictionary(let entries) = unwrapped else { return [] }
        return entries.compactMap { entry in entry.key.integer.map { ($0, entry.value) } }
    }
}

/// An argument to send: the few shapes BlueZ's and the notification server's methods take, and the replies an
/// exported object gives.
public enum DBusArgument: Sendable {
    case string(String)
    case objectPath(String)
    /// `u`: RequestName's flags, a notification's id.
    case uint32(UInt32)
    /// `i`: a notification's expiry.
    case int32(Int32)
    /// `as`: a notification's actions.
    case strings([String])
    /// `av`: the arguments of a signal a test's mock emits.
    case variants([DBusPropertyValue])
    /// `a{sv}`: a discovery filter, options, an object's properties.
    case properties([(String, DBusPropertyValue)])
    /// `v`: one property (Properties.Get's answer).
    case variant(DBusPropertyValue)
    /// `a{oa{sa{sv}}}`: ObjectManager.GetManagedObjects's answer, each object's interfaces and their properties.
    case managedObjects([(path: String, interfaces: [(String, [(String, DBusPropertyValue)])])])
}

/// A value inside a variant, with the type it is sent as.
public enum DBusPropertyValue: Sendable {
    case string(String)
    case bool(Bool)
    /// `y`: a notification's urgency.
    case byte(UInt8)
    case int16(Int16)
    case uint16(UInt16)
    case uint32(UInt32)
    /// `ay`.
    case bytes([UInt8])
    /// `a{qv}` of `ay`: ManufacturerData.
    case bytesByCompany([(UInt16, [UInt8])])
    /// `a(yyay)`: an advertisement monitor's patterns (start position, AD type, content).
    case patterns([(start: UInt8, type: UInt8, content: [UInt8])])

    /// The D-Bus type signature.
    public var signature: String {
        switch self {
        case .string: "s"
        case .bool: "b"
        case .byte: "y"
        case .int16: "n"
        case .uint16: "q"
        case .uint32: "u"
        case .bytes: "ay"
        case .bytesByCompany: "a{qv}"
        case .patterns: "a(yyay)"
        }
    }
}
