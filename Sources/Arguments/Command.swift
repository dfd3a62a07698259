/// A command or a group of subcommands, swift-argument-parser style: the root only configures, and
/// a group may also run itself (`loyalty devices`, `loyalty devices revoke ID`).
public struct Command: Sendable {
    public let name: String
    public let summary: String
    /// Longer text shown by `--help`: what it does, examples, exit codes.
    public var discussion: String
    public var options: [OptionDeclaration]
    public var positionals: [PositionalDeclaration]
    /// Options that may also come before a subcommand's name, anywhere under this group
    /// (`loyalty --json sync`); the command that runs must declare them too.
    public var globalOptions: [OptionDeclaration]
    /// Sets of options of which at most one may be given (`--hci` and `--adapter` both name the controller).
    public var exclusiveOptions: [[OptionDeclaration]]
    public var subcommands: [Command]
    /// The root's release: `--version` prints it, and the root answers `--generate-completion-script`.
    public var version: String?
    public var run: (@Sendable (ParsedArguments) throws -> Void)?
    /// What makes each option's value of its text, by option name, and each positional's word.
    let valueParsers: [String: @Sendable (String) throws -> any Sendable]
    let wordParsers: [PositionalDeclaration: @Sendable (String) throws -> any Sendable]

    public init(
        name: String, summary: String, discussion: String = "", options: [any DeclaredOption] = [],
        positionals: [any DeclaredPositional] = [], globalOptions: [any DeclaredOption] = [],
        exclusiveOptions: [[any DeclaredOption]] = [], subcommands: [Command] = [], version: String? = nil,
        run: (@Sendable (ParsedArguments) throws -> Void)? = nil
    ) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.options = options.map(\.declaration)
        self.positionals = positionals.map(\.declaration)
        self.globalOptions = globalOptions.map(\.declaration)
        self.exclusiveOptions = exclusiveOptions.map { $0.map(\.declaration) }
        self.subcommands = subcommands
        self.version = version
        self.run = run
        valueParsers = Dictionary(
            options.compactMap { option in option.valueParser.map { (option.declaration.name, $0) } },
            uniquingKeysWith: { first, _ in first })
        wordParsers = Dictionary(
            positionals.map { ($0.declaration, $0.wordParser) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Wrong arguments: exit code 64, like sysexits' EX_USAGE. Shown with the command's usage line.
public struct UsageError: Error, CustomStringConvertible {
    public let message: String
    public let commandPath: String
    /// `USAGE: loyalty sync [--full] ...`
    public let usage: String

    public init(_ message: String, commandPath: String, usage: String) {
        self.message = message
        self.commandPath = commandPath
        self.usage = usage
    }

    public var description: String { message }
}

/// An error that says itself in one line and knows its sysexits-style code: `main` prints
/// `error: DESCRIPTION` and exits with it.
public protocol CommandError: Error, CustomStringConvertible {
    var exitCode: Int32 { get }
}

/// A failure to report in one line, with a sysexits-style code.
public struct CommandFailure: CommandError {
    public let message: String
    public let exitCode: Int32
    public init(_ message: String, exitCode: Int32 = ExitCode.failure) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}

/// Ends the command with a code after it has already said everything.
public struct SilentExit: Error {
    public let code: Int32
    public init(code: Int32) { self.code = code }
}

public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let dataError: Int32 = 65
    public static let unavailable: Int32 = 69
    public static let ioError: Int32 = 74
    public static let tempFailure: Int32 = 75
    public static let noPermission: Int32 = 77
}

/// What the arguments ask for.
public enum Invocation {
    /// Run `command` with `arguments`.
    case run(Command, ParsedArguments)
    /// Print this text (help, the version, a completion script) and exit 0.
    case print(String)
}

extension Command {
    /// `USAGE: path [--flag] [--option VALUE] --required VALUE POSITIONALS`, from the declarations, as
    /// `--help` and usage errors show it.
    func usage(path: String) -> String {
        var line = "USAGE: \(path)"
        if !subcommands.isEmpty { line += run == nil ? " <command>" : " [<command>]" }
        for option in options { line += " \(option.synopsis)" }
        for positional in positionals { line += " \(positional.synopsis)" }
        return line
    }

    /// The root's own options that end parsing: `--version` and `--generate-completion-script SHELL`.
    var builtInOptions: [OptionDeclaration] {
        guard version != nil else { return [] }
        return [
            OptionDeclaration(name: "version", valueName: nil, help: "Show the version."),
            OptionDeclaration(
                name: "generate-completion-script", valueName: "SHELL",
                help: "Print the completion script for bash, zsh or fish."),
        ]
    }

    /// The options `--help` lists and shells complete: the command's own, the root's global and
    /// built-in ones, and --help.
    public var shownOptions: [OptionDeclaration] {
        let own = Set(options.map(\.name))
        let help = OptionDeclaration(name: "help", valueName: nil, help: "Show this help.")
        return options + globalOptions.filter { !own.contains($0.name) } + builtInOptions + [help]
    }

    public func help(path: String) -> String {
        var text = "\(summary)\n\n\(usage(path: path))\n"
        if !discussion.isEmpty { text += "\n\(discussion)\n" }
        if !subcommands.isEmpty {
            text += "\nCOMMANDS:\n"
            let width = subcommands.map(\.name.count).max() ?? 0
            for sub in subcommands {
                text += "  \(sub.name.padding(width))  \(sub.summary)\n"
            }
            text += "\n  See '\(path) <command> --help' for a command's options.\n"
        }
        let shown = shownOptions
        text += "\nOPTIONS:\n"
        let labels = shown.map { "--\($0.name)" + ($0.valueName.map { " \($0)" } ?? "") }
        let width = labels.map(\.count).max() ?? 0
        for (label, option) in zip(labels, shown) {
            text += "  \(label.padding(width))  \(option.help)\n"
        }
        return text
    }
}

extension String {
    public func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
