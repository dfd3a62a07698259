/// What the parser, `--help` and the completion scripts know of one option: `--name VALUE` (or
/// `--name=VALUE`) when it has a value name, else a flag.
public struct OptionDeclaration: Hashable, Sendable {
    public let name: String
    /// The value's placeholder in help (`FILE`, `URL`); nil for a flag.
    public let valueName: String?
    public let help: String
    /// Whether it may be given more than once (each value is kept).
    public let repeatable: Bool

    /// Whether its value names a file or directory, which shells complete from the file system.
    var takesPath: Bool { valueName == "FILE" || valueName == "DIR" }
}

/// A declared option, typed: a command lists its declarations and reads its arguments through them.
public protocol DeclaredOption: Sendable {
    var declaration: OptionDeclaration { get }
}

/// `--name`, present or not.
public struct Flag: DeclaredOption {
    public let declaration: OptionDeclaration

    public init(_ name: String, help: String) {
        declaration = OptionDeclaration(name: name, valueName: nil, help: help, repeatable: false)
    }
}

/// `--name VALUE`, read as a `Value`: text that `parse` refuses is a usage error naming the option.
public struct Option<Value>: DeclaredOption {
    public let declaration: OptionDeclaration
    let parse: @Sendable (String) -> Value?

    public init(
        _ name: String, value valueName: String, help: String, repeatable: Bool = false,
        parse: @escaping @Sendable (String) -> Value?
    ) {
        declaration = OptionDeclaration(name: name, valueName: valueName, help: help, repeatable: repeatable)
        self.parse = parse
    }
}

extension Option where Value == String {
    /// An option whose value is taken as typed; the command checks it.
    public init(_ name: String, value valueName: String, help: String, repeatable: Bool = false) {
        self.init(name, value: valueName, help: help, repeatable: repeatable) { $0 }
    }
}

/// Words after the options, under one name, with how many of them there may be.
public struct Positional: Hashable, Sendable {
    public enum Count: Hashable, Sendable {
        case one
        case optional
        case oneOrMore
        case zeroOrMore
    }

    public let name: String
    public let count: Count

    public init(_ name: String, _ count: Count = .one) {
        self.name = name
        self.count = count
    }

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
