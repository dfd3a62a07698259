#if canImport(Glibc)
    import Glibc
#endif

/// One option of a command: `--name VALUE` (or `--name=VALUE`) when it takes a value, else a flag.
struct OptionSpec: Sendable {
    let name: String
    let valueName: String?
    let help: String
    var repeatable = false

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }

    static func value(_ name: String, _ valueName: String, _ help: String, repeatable: Bool = false)
        -> OptionSpec
    {
        OptionSpec(name: name, valueName: valueName, help: help, repeatable: repeatable)
    }
}

/// A command or a group of subcommands, swift-argument-parser style: the root only configures.
struct CommandSpec: Sendable {
    let name: String
    let summary: String
    /// The argument synopsis after the command path, e.g. `[--hci] HEX...`.
    var synopsis = ""
    /// Longer text shown by `--help`: what it does, examples, exit codes.
    var discussion = ""
    var options: [OptionSpec] = []
    var subcommands: [CommandSpec] = []
    /// The root's release: `--version` prints it.
    var version: String? = nil
    var run: (@Sendable (ParsedArguments) throws -> Void)? = nil
}

/// What the user typed, checked against a `CommandSpec`.
struct ParsedArguments {
    let commandPath: String
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { values[name]?.last }
    func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// A value parsed by `parse`, or a usage error naming the option.
    func value<T>(_ name: String, default fallback: T, _ parse: (String) -> T?) throws -> T {
        guard let text = value(name) else { return fallback }
        guard let parsed = parse(text) else {
            throw UsageError("invalid value '\(text)' for --\(name)", commandPath: commandPath)
        }
        return parsed
    }
}

/// Wrong arguments: exit code 64, like sysexits' EX_USAGE.
struct UsageError: Error {
    let message: String
    let commandPath: String
    init(_ message: String, commandPath: String) {
        self.message = message
        self.commandPath = commandPath
    }
}

/// A failure to report in one line, with a sysexits-style code.
struct CommandFailure: Error {
    let message: String
    let exitCode: Int32
    init(_ message: String, exitCode: Int32 = ExitCode.failure) {
        self.message = message
        self.exitCode = exitCode
    }
}

/// Ends the command with a non-zero code after it has already said everything.
struct SilentExit: Error {
    let code: Int32
}

enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let unavailable: Int32 = 69
    static let ioError: Int32 = 74
    static let tempFailure: Int32 = 75
    static let noPermission: Int32 = 77

    static let helpText = """
        EXIT CODES:
          0   success
          1   the command failed (the message says why)
          64  wrong arguments (see --help)
          65  malformed input data (hex, packet, capture file)
          69  a service or the radio is unavailable
          74  a file could not be read or written
          75  temporary failure: the network or server; retry later
          77  permission denied (token revoked or wrong, missing capabilities)
        """
}

extension CommandSpec {
    /// Parses `arguments` (without the program name) and runs the chosen command.
    func main(_ arguments: [String]) -> Int32 {
        do {
            try dispatch(arguments[...], path: name)
            return ExitCode.success
        } catch let error as UsageError {
            printError("error: \(error.message)\nSee '\(error.commandPath) --help'.")
            return ExitCode.usage
        } catch let exit as SilentExit {
            return exit.code
        } catch let failure as CommandFailure {
            printError("error: \(failure.message)")
            return failure.exitCode
        } catch {
            printError("error: \(error)")
            return ExitCode.failure
        }
    }

    private func dispatch(_ arguments: ArraySlice<String>, path: String) throws {
        if let first = arguments.first, !first.hasPrefix("-"),
            let sub = subcommands.first(where: { $0.name == first })
        {
            return try sub.dispatch(arguments.dropFirst(), path: "\(path) \(sub.name)")
        }
        if arguments.contains("--help") || arguments.contains("-h") {
            return printOut(help(path: path))
        }
        if let version, arguments.contains("--version") {
            return printOut("\(name) \(version)")
        }
        if version != nil, let index = arguments.firstIndex(of: "--generate-completion-script") {
            let shell = arguments[(index + 1)...].first ?? ""
            guard let script = completionScript(shell: shell) else {
                throw UsageError("--generate-completion-script needs bash, zsh or fish", commandPath: path)
            }
            return printOut(script)
        }
        guard let run else {
            if let first = arguments.first {
                throw UsageError("unknown command '\(first)'", commandPath: path)
            }
            return printOut(help(path: path))
        }
        try run(parse(arguments, path: path))
    }

    private func parse(_ arguments: ArraySlice<String>, path: String) throws -> ParsedArguments {
        var parsed = ParsedArguments(commandPath: path)
        var rest = arguments
        while let argument = rest.popFirst() {
            if argument == "--" {
                parsed.positionals.append(contentsOf: rest)
                break
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                parsed.positionals.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String? = nil
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'", commandPath: path)
            }
            if option.valueName == nil {
                guard inlineValue == nil else {
                    throw UsageError("--\(name) takes no value", commandPath: path)
                }
                parsed.flags.insert(name)
                continue
            }
            guard let value = inlineValue ?? rest.popFirst() else {
                throw UsageError("--\(name) needs a value", commandPath: path)
            }
            if !option.repeatable, parsed.values[name] != nil {
                throw UsageError("--\(name) given twice", commandPath: path)
            }
            parsed.values[name, default: []].append(value)
        }
        return parsed
    }

    func help(path: String) -> String {
        var text = "\(summary)\n\nUSAGE: \(path)"
        if !subcommands.isEmpty, run == nil {
            text += " <command>"
        }
        if !synopsis.isEmpty { text += " \(synopsis)" }
        text += "\n"
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

extension CommandSpec {
    /// The options `--help` lists: the command's own, the root's built-ins, and --help.
    var shownOptions: [OptionSpec] {
        let builtIns: [OptionSpec] =
            version == nil
            ? []
            : [
                .flag("version", "Show the version."),
                .value("generate-completion-script", "SHELL", "Print the completion script for bash, zsh or fish."),
            ]
        return options + builtIns + [.flag("help", "Show this help.")]
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

func printOut(_ text: String) {
    print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
}

/// Writes to standard error; `newline: false` for a progress line that rewrites itself.
func printError(_ text: String, newline: Bool = true) {
    var line = !newline || text.hasSuffix("\n") ? text : text + "\n"
    line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
}

/// Whether standard output is a terminal: tables and progress there, JSON lines in pipes.
var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
