import Arguments
import Testing

/// A small tree shaped like `loyalty`'s: a root that only configures, with global options, a group, a
/// group that also runs, and leaves with each kind of positional.
private enum Tree {
    static let json = Flag("json", help: "JSON lines.")
    static let server = Option<String>("server", value: "URL", help: "The server.")
    static let count = Option<Int>("count", value: "N", help: "How many.", expected: "a whole number") { Int($0) }
    static let name = Option<String>("name", value: "NAME", help: "A name.", required: true)
    static let port = Option<UInt16>("port", value: "PORT", help: "A port.") { text in
        guard let port = UInt16(text) else { throw InvalidValue("not a port; expected 0 to 65535") }
        return port
    }
    static let number = Positional("NUMBER", expected: "a whole number") { Int($0) }
    static let tag = Option<String>("tag", value: "TAG", help: "A tag (repeatable).", repeatable: true)
    static let other = Flag("other", help: "Declared by no command.")
    static let file = Positional("FILE")
    static let words = Positional("WORD", .zeroOrMore)
    static let hex = Positional("HEX", .oneOrMore)
    static let code = Positional("CODE", .optional)

    static func leaf(
        _ name: String, options: [any DeclaredOption] = [json, server], positionals: [any DeclaredPositional] = [],
        exclusive: [[any DeclaredOption]] = []
    ) -> Command {
        Command(
            name: name, summary: "The \(name) command.", options: options, positionals: positionals,
            exclusiveOptions: exclusive
        ) { _ in }
    }

    static let root = Command(
        name: "tool", summary: "A tool.", globalOptions: [json, server],
        subcommands: [
            leaf("sync", options: [json, server, count, tag]),
            leaf("decode", options: [], positionals: [hex]),
            leaf("link", positionals: [code, words]),
            leaf("make", options: [name, tag, count, port], positionals: [number], exclusive: [[count, port]]),
            Command(
                name: "retailer", summary: "Retailers.",
                subcommands: [leaf("offers"), leaf("copy", positionals: [file, file.renamed("TO")])]),
            Command(
                name: "devices", summary: "Devices.", options: [json],
                subcommands: [leaf("revoke", positionals: [file])]
            ) { _ in },
        ],
        version: "1.2.3")

    /// The command and arguments `tokens` run, or nil when they print something.
    static func run(_ tokens: [String]) throws -> (path: String, arguments: ParsedArguments)? {
        guard case .run(_, let arguments) = try root.parse(tokens) else { return nil }
        return (arguments.commandPath, arguments)
    }

    static func printed(_ tokens: [String]) throws -> String? {
        guard case .print(let text) = try root.parse(tokens) else { return nil }
        return text
    }

    static func usageError(_ tokens: [String]) -> UsageError? {
        do throws(UsageError) {
            _ = try root.parse(tokens)
            return nil
        } catch {
            return error
        }
    }
}

extension Positional where Value == String {
    fileprivate func renamed(_ name: String) -> Positional { Positional(name, declaration.count) }
}

@Suite struct ParserTests {
    @Test func optionsAreReadThroughTheirDeclarations() throws {
        let (path, arguments) = try #require(
            try Tree.run(["sync", "--json", "--count", "3", "--tag=a", "--tag", "b", "--server", "--help"]))
        #expect(path == "tool sync")
        #expect(arguments.flag(Tree.json))
        #expect(arguments.value(Tree.count) == 3)
        #expect(arguments.values(Tree.tag) == ["a", "b"])
        // A value that looks like an option is still the value: --help is only a flag.
        #expect(arguments.value(Tree.server) == "--help")
        #expect(arguments.isGiven(Tree.count))

        let bare = try #require(try Tree.run(["sync"])).arguments
        #expect(!bare.flag(Tree.json) && !bare.isGiven(Tree.count))
        #expect(bare.value(Tree.count) == nil)
    }

    @Test func aValueItsDeclarationRefusesIsAUsageErrorWhenTheCommandLineIsParsed() throws {
        #expect(Tree.usageError(["sync", "--count", "many"])?.message == "--count: expected a whole number")
        #expect(Tree.usageError(["make", "--name", "n", "--port", "http", "1"])?.message
            == "--port: not a port; expected 0 to 65535")
        #expect(Tree.usageError(["make", "--name", "n", "x"])?.message == "NUMBER: expected a whole number")
        // Every value, repeated ones too, before the command could run.
        #expect(Tree.usageError(["sync", "--count", "1", "--tag", "a", "--count", "b"])?.message == "--count given twice")
        let made = try #require(try Tree.run(["make", "--name", "n", "--port=8080", "7"])).arguments
        #expect(made.value(Tree.port) == 8080 && made.word(Tree.number) == 7 && made.required(Tree.name) == "n")
    }

    @Test func requiredExclusiveOptionsAndCommandChecksAreUsageErrors() throws {
        #expect(Tree.usageError(["make", "1"])?.message == "--name is required")
        #expect(Tree.usageError(["make", "--name", "n", "--count", "1", "--port", "2", "3"])?.message
            == "give only one of --count, --port")
        let given = try #require(try Tree.run(["sync", "--count", "3"])).arguments

        struct Refusal: Error, CustomStringConvertible { var description: String { "major must be 0 to 65535" } }
        #expect(try given.checked { 7 } == 7)
        do {
            _ = try given.checked { () throws -> Int in throw Refusal() }
            Issue.record("a failed check must throw")
        } catch {
            #expect(error.message == "major must be 0 to 65535")
        }
    }

    @Test func globalOptionsWorkBeforeOrAfterTheSubcommand() throws {
        for tokens in [
            ["--json", "--server", "http://x", "sync"], ["sync", "--json", "--server=http://x"],
            ["--json", "sync", "--server", "http://x"],
        ] {
            let (path, arguments) = try #require(try Tree.run(tokens), "\(tokens)")
            #expect(path == "tool sync" && arguments.flag(Tree.json), "\(tokens)")
            #expect(arguments.value(Tree.server) == "http://x", "\(tokens)")
        }
        // Nested: before the group, between group and command.
        let offers = try #require(try Tree.run(["--json", "retailer", "--server", "u", "offers"]))
        #expect(offers.path == "tool retailer offers")
        #expect(offers.arguments.value(Tree.server) == "u")
        // A command that does not take the global option refuses it, wherever it was given.
        #expect(Tree.usageError(["--json", "decode", "00"])?.message == "unknown option '--json'")
        // A non-repeatable value given before and after the subcommand is given twice.
        #expect(Tree.usageError(["--server", "a", "sync", "--server", "b"])?.message == "--server given twice")
    }

    @Test func unexpectedArgumentsAndUnknownOptionsAreUsageErrorsWithTheUsageLine() throws {
        let extra = try #require(Tree.usageError(["sync", "extra-word"]))
        #expect(extra.message == "unexpected argument 'extra-word'")
        #expect(extra.usage == "USAGE: tool sync [--json] [--server URL] [--count N] [--tag TAG]...")
        #expect(extra.commandPath == "tool sync")
        #expect(Tree.usageError(["retailer", "offers", "import", "x.csv"])?.message == "unexpected argument 'import'")
        #expect(Tree.usageError(["retailer", "import"])?.message == "unknown command 'import'")
        #expect(Tree.usageError(["sync", "--bogus"])?.message == "unknown option '--bogus'")
        #expect(Tree.usageError(["sync", "--bogus=1"])?.message == "unknown option '--bogus'")
        #expect(Tree.usageError(["sync", "-x"])?.message == "unknown option '-x'")
        #expect(Tree.usageError(["--bogus", "sync"])?.message == "unknown option '--bogus'")
        #expect(Tree.usageError(["sync", "--count"])?.message == "--count needs a value")
        #expect(Tree.usageError(["sync", "--json=yes"])?.message == "--json takes no value")
        #expect(Tree.usageError(["--json"])?.message == "missing command")
        #expect(Tree.usageError(["devices", "extra"])?.message == "unexpected argument 'extra'")
        #expect(Tree.usageError(["retailer", "copy", "a"])?.usage == "USAGE: tool retailer copy [--json] [--server URL] FILE TO")
    }

    @Test func theUsageLineIsMadeFromTheDeclarations() throws {
        let make = try #require(Tree.usageError(["make"]))
        #expect(make.usage == "USAGE: tool make --name NAME [--tag TAG]... [--count N] [--port PORT] NUMBER")
        #expect(Tree.usageError(["devices", "revoke"])?.usage == "USAGE: tool devices revoke [--json] [--server URL] FILE")
        #expect(Tree.usageError(["decode"])?.usage == "USAGE: tool decode HEX...")
    }

    @Test func anUnknownCommandSuggestsTheNearestOne() {
        #expect(Tree.usageError(["snyc"])?.message == "unknown command 'snyc'; did you mean 'sync'?")
        #expect(Tree.usageError(["retailer", "ofers"])?.message == "unknown command 'ofers'; did you mean 'offers'?")
        #expect(Tree.usageError(["decod", "00"])?.message == "unknown command 'decod'; did you mean 'decode'?")
        // Nothing near: no guess.
        #expect(Tree.usageError(["retailer", "import"])?.message == "unknown command 'import'")
        #expect(Tree.usageError(["zz"])?.message == "unknown command 'zz'")
    }

    @Test func positionalsAreCountedAsDeclared() throws {
        #expect(Tree.usageError(["decode"])?.message == "missing HEX")
        let hex = try #require(try Tree.run(["decode", "00", "--", "-01", "--help"])).arguments
        #expect(hex.words(Tree.hex) == ["00", "-01", "--help"])

        let none = try #require(try Tree.run(["link"])).arguments
        #expect(none.word(Tree.code) == nil && none.words(Tree.words).isEmpty)
        let grouped = try #require(try Tree.run(["link", "k7m2", "q9xp", "4htd"])).arguments
        #expect(grouped.word(Tree.code) == "k7m2" && grouped.words(Tree.words) == ["q9xp", "4htd"])

        let copy = try #require(try Tree.run(["retailer", "copy", "a", "b"])).arguments
        #expect(copy.word(Tree.file) == "a" && copy.word(Tree.file.renamed("TO")) == "b")
        #expect(Tree.usageError(["retailer", "copy", "a", "b", "c"])?.message == "unexpected argument 'c'")
        #expect(Tree.usageError(["devices", "revoke"])?.message == "missing FILE")
    }

    @Test func aGroupThatRunsTakesItsOwnOptionsAndItsSubcommands() throws {
        #expect(try Tree.run(["devices", "--json"])?.path == "tool devices")
        let revoke = try #require(try Tree.run(["devices", "--json", "revoke", "id"]))
        #expect(revoke.path == "tool devices revoke" && revoke.arguments.flag(Tree.json))
        #expect(revoke.arguments.word(Tree.file) == "id")
    }

    @Test func helpIsAFlagOnly() throws {
        let help = try #require(try Tree.printed(["sync", "--help"]))
        #expect(help.hasPrefix("The sync command.\n\nUSAGE: tool sync [--json] [--server URL] [--count N] [--tag TAG]...\n"))
        #expect(help.contains("--count N") && help.contains("--help"))
        #expect(try Tree.printed(["-h"])?.contains("COMMANDS:") == true)
        #expect(try Tree.printed(["retailer", "--help"])?.contains("USAGE: tool retailer <command>") == true)
        #expect(try Tree.printed([])?.contains("USAGE: tool <command>") == true)
        // After --, or as an option's value, it is a word like any other.
        #expect(try Tree.run(["decode", "--", "--help"]) != nil)
        #expect(try Tree.run(["sync", "--server", "--help"]) != nil)
    }

    @Test func theRootAnswersVersionAndCompletionScripts() throws {
        #expect(try Tree.printed(["--version"]) == "tool 1.2.3")
        #expect(Tree.usageError(["sync", "--version"])?.message == "unknown option '--version'")
        let bash = try #require(try Tree.printed(["--generate-completion-script", "bash"]))
        #expect(bash.contains("complete -F _tool tool") && bash.contains("'tool retailer copy'"))
        #expect(try Tree.printed(["--generate-completion-script=fish"])?.contains("complete -c tool") == true)
        #expect(try Tree.printed(["--generate-completion-script", "zsh"])?.hasPrefix("#compdef tool") == true)
        #expect(Tree.usageError(["--generate-completion-script", "tcsh"]) != nil)
        // The root's help lists its global and built-in options.
        let help = try #require(try Tree.printed(["--help"]))
        for option in ["--json", "--server URL", "--version", "--generate-completion-script SHELL", "--help"] {
            #expect(help.contains("  \(option)"), "\(option)")
        }
    }

    @Test func readingAnOptionTheCommandDoesNotDeclareStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let arguments = try #require(try Tree.run(["sync"])).arguments
            _ = arguments.flag(Tree.other)
        }
        await #expect(processExitsWith: .failure) {
            let arguments = try #require(try Tree.run(["sync"])).arguments
            _ = arguments.words(Tree.file)
        }
        // Same name, another declaration: still not this command's option.
        await #expect(processExitsWith: .failure) {
            let arguments = try #require(try Tree.run(["sync"])).arguments
            _ = arguments.value(Option<String>("count", value: "N", help: "Another count."))
        }
    }
}
