/// What the parser, `--help`, the usage line and the completion scripts know of one option: `--name VALUE`
/// (or `--name=VALUE`) when it has a value name, else a flag.
public struct OptionDeclaration: Hashable, Sendable {
    public let name: String
    /// The value's placeholder in help (`FILE`, `URL`); nil for a flag.
    public let valueName: String?
    public let help: String
    /// Whether it may be given more than once (each value is kept).
    public let repeatable: Bool
    /// Whether the command cannot run without it: a usage error when it is not given.
    public let isRequired: Bool

    init(name: String, valueName: String?, help: String, repeatable: Bool = false, isRequired: Bool = false) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.repeatable = repeatable
        self.isRequired = isRequired
    }

    /// Whether its value names a file or directory, which shells complete from the file system.
    var takesPath: Bool { valueName == "FILE" || valueName == "DIR" }

    /// `--full`, `[--near LAT,LON]`, `--name NAME`, `[--region REGION]...`, as the usage line shows it.
    var synopsis: String {
        let word = "--\(name)" + (valueName.map { " \($0)" } ?? "")
        return (isRequired ? word : "[\(word)]") + (repeatable ? "..." : "")
    }
}

/// Why a value was refused, in words that follow the option's name: `--uuid: not a UUID; expected
/// 8-4-4-4-12 hex digits`.
public struct InvalidValue: Error, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A declared option, typed: a command lists its declarations and reads its arguments through them.
public protocol DeclaredOption: Sendable {
    var declaration: OptionDeclaration { get }
    /// What makes a value of the text given, or throws why not (a usage error naming the option); nil for a flag.
    var valueParser: (@Sendable (String) throws -> any Sendable)? { get }
}

/// `--name`, present or not.
public struct Flag: DeclaredOption {
    public let declaration: OptionDeclaration

    public init(_ name: String, help: String) {
        declaration = OptionDeclaration(name: name, valueName: nil, help: help)
    }

    public var valueParser: (@Sendable (String) throws -> any Sendable)? { nil }
}

/// `--name VALUE`, parsed into a `Value` when the command line is parsed: text that `parse` refuses is a
/// usage error, `--name: REASON`, before the command runs.
public struct Option<Value: Sendable>: DeclaredOption {
    public let declaration: OptionDeclaration
    let parse: @Sendable (String) throws -> Value

    /// `parse` throws why it refuses a value (its description is the reason).
    public init(
        _ name: String, value valueName: String, help: String, repeatable: Bool = false, required: Bool = false,
        parse: @escaping @Sendable (String) throws -> Value
    ) {
        declaration = OptionDeclaration(
            name: name, valueName: valueName, help: help, repeatable: repeatable, isRequired: required)
        self.parse = parse
    }

    /// `parse` returns nil for a value it refuses; the reason is then `expected EXPECTED`.
    public init(
        _ name: String, value valueName: String, help: String, repeatable: Bool = false, required: Bool = false,
        expected: String, parse: @escaping @Sendable (String) -> Value?
    ) {
        self.init(name, value: valueName, help: help, repeatable: repeatable, required: required) { text in
            guard let value = parse(text) else { throw InvalidValue("expected \(expected)") }
            return value
        }
    }

    public var valueParser: (@Sendable (String) throws -> any Sendable)? { parse }
}

extension Option where Value == String {
    /// An option whose value is taken as typed.
    public init(_ name: String, value valueName: String, help: String, repeatable: Bool = false, required: Bool = false)
    {
        self.init(name, value: valueName, help: help, repeatable: repeatable, required: required) { $0 }
    }
}

/// What the parser and the usage line know of a positional: its name and how many words it takes.
public struct PositionalDeclaration: Hashable, Sendable {
    public enum Count: Hashable, Sendable {
        case one
        case optional
        case oneOrMore
        case zeroOrMore
    }

    public let name: String
    public let count: Count

    var minimum: Int { count == .one || count == .oneOrMore ? 1 : 0 }
    /// nil: no limit.
    var maximum: Int? { count == .one || count == .optional ? 1 : nil }

    /// `NAME`, `[NAME]`, `NAME...` or `[NAME...]`.
    var synopsis: String {
        switch count {
        case .one: name
        case .optional: "[\(name)]"
        case .oneOrMore: "\(name)..."
        case .zeroOrMore: "[\(name)...]"
        }
    }
}

/// A declared positional, typed like an option.
public protocol DeclaredPositional: Sendable {
    var declaration: PositionalDeclaration { get }
    var wordParser: @Sendable (String) throws -> any Sendable { get }
}

/// Words after the options, under one name, with how many of them there may be, each parsed into a `Value`
/// when the command line is parsed: a word `parse` refuses is a usage error, `NAME: REASON`.
public struct Positional<Value: Sendable>: DeclaredPositional {
    public typealias Count = PositionalDeclaration.Count
    public let declaration: PositionalDeclaration
    let parse: @Sendable (String) throws -> Value

    public init(_ name: String, _ count: Count = .one, parse: @escaping @Sendable (String) throws -> Value) {
        declaration = PositionalDeclaration(name: name, count: count)
        self.parse = parse
    }

    /// `parse` returns nil for a word it refuses; the reason is then `expected EXPECTED`.
    public init(
        _ name: String, _ count: Count = .one, expected: String, parse: @escaping @Sendable (String) -> Value?
    ) {
        self.init(name, count) { text in
            guard let value = parse(text) else { throw InvalidValue("expected \(expected)") }
            return value
        }
    }

    public var wordParser: @Sendable (String) throws -> any Sendable { parse }
}

extension Positional where Value == String {
    /// Words taken as typed.
    public init(_ name: String, _ count: Count = .one) {
        self.init(name, count) { $0 }
    }
}
