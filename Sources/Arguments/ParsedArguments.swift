extension Command {
    /// What `arguments` (without the program's name) ask of this root command.
    public func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        try resolve(arguments[...], path: name, inherited: [], globals: [], isRoot: true)
    }

    /// Walks into the subcommand that `tokens` name, carrying the options given before it down to
    /// the command that runs, which checks them against its own declarations.
    private func resolve(
        _ tokens: ArraySlice<String>, path: String, inherited: [String], globals: [OptionDeclaration], isRoot: Bool
    ) throws(UsageError) -> Invocation {
        let globals = globals + globalOptions
        guard !subcommands.isEmpty else { return try parseOwn(inherited + tokens, path: path, isRoot: isRoot) }
        var rest = tokens
        var leading: [String] = []
        while let token = rest.first, case let (name, inline)? = Self.optionName(token) {
            rest.removeFirst()
            if name == "help" || token == "-h" { return .print(help(path: path)) }
            if isRoot, let invocation = try builtIn(name, inline, &rest, path: path) { return invocation }
            guard let option = (options + globals).first(where: { $0.name == name }) else {
                throw unknownOption(token, path: path)
            }
            leading.append(token)
            if option.valueName != nil, inline == nil {
                guard let value = rest.popFirst() else { throw needsValue(name, path: path) }
                leading.append(value)
            }
        }
        if let word = rest.first, let sub = subcommands.first(where: { $0.name == word }) {
            return try sub.resolve(
                rest.dropFirst(), path: "\(path) \(word)", inherited: inherited + leading, globals: globals,
                isRoot: false)
        }
        guard run != nil else {
            if let word = rest.first, word != "--" {
                let suggestion = nearestSubcommand(to: word).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError(
                    "unknown command '\(word)'\(suggestion)", commandPath: path, usage: usage(path: path))
            }
            guard inherited.isEmpty, leading.isEmpty, rest.isEmpty else {
                throw UsageError("missing command", commandPath: path, usage: usage(path: path))
            }
            return .print(help(path: path))
        }
        return try parseOwn(inherited + tokens, path: path, isRoot: isRoot)
    }

    /// The arguments of the command that runs: its declared options, each value parsed, then its
    /// positionals counted and parsed, so that a bad value fails before the command does anything.
    private func parseOwn(_ tokens: [String], path: String, isRoot: Bool) throws(UsageError) -> Invocation {
        var parsed = ParsedArguments(
            commandPath: path, usage: usage(path: path), declared: Set(options),
            positionalDeclarations: positionals)
        var words: [String] = []
        var rest = tokens[...]
        while let token = rest.popFirst() {
            if token == "--" {
                words += rest
                break
            }
            guard case let (name, inline)? = Self.optionName(token) else {
                words.append(token)
                continue
            }
            if name == "help" || token == "-h" { return .print(help(path: path)) }
            if isRoot, let invocation = try builtIn(name, inline, &rest, path: path) { return invocation }
            guard let option = options.first(where: { $0.name == name }) else {
                throw unknownOption(token, path: path)
            }
            guard let parse = valueParsers[name] else {
                guard inline == nil else { throw parsed.usageError("--\(name) takes no value") }
                parsed.flags.insert(name)
                continue
            }
            guard let text = inline ?? rest.popFirst() else { throw needsValue(name, path: path) }
            if !option.repeatable, parsed.values[name] != nil {
                throw parsed.usageError("--\(name) given twice")
            }
            do {
                parsed.values[name, default: []].append(try parse(text))
            } catch {
                throw parsed.usageError("--\(name): \(error)")
            }
        }
        for option in options where option.isRequired && parsed.values[option.name] == nil {
            throw parsed.usageError("--\(option.name) is required")
        }
        for set in exclusiveOptions {
            let given = set.filter { parsed.values[$0.name] != nil || parsed.flags.contains($0.name) }
            if given.count > 1 {
                throw parsed.usageError("give only one of " + given.map { "--\($0.name)" }.joined(separator: ", "))
            }
        }
        try parsed.assign(words, parsers: wordParsers)
        return .run(self, parsed)
    }

    /// The subcommand a mistyped `word` most likely meant: at most two edits away, and fewer than its length.
    private func nearestSubcommand(to word: String) -> String? {
        let scored = subcommands.map { ($0.name, editDistance(word, $0.name)) }
        guard let (name, distance) = scored.min(by: { $0.1 < $1.1 }), distance <= min(2, word.count - 1) else {
            return nil
        }
        return name
    }

    /// The root's `--version` and `--generate-completion-script SHELL`; nil for any other option.
    private func builtIn(_ name: String, _ inline: String?, _ rest: inout ArraySlice<String>, path: String)
        throws(UsageError) -> Invocation?
    {
        guard let version, builtInOptions.contains(where: { $0.name == name }) else { return nil }
        if name == "version" { return .print("\(self.name) \(version)") }
        let shell = inline ?? rest.popFirst() ?? ""
        guard let script = completionScript(shell: shell) else {
            throw UsageError(
                "--generate-completion-script needs bash, zsh or fish", commandPath: path, usage: usage(path: path))
        }
        return .print(script)
    }

    /// `--name` or `--name=value` as (name, value); `-h` as help; `-x` as the unknown `x`. nil for a
    /// word that is not an option: anything else, `-` (standard input, by custom) and `--`.
    private static func optionName(_ token: String) -> (name: String, inline: String?)? {
        guard token.hasPrefix("-"), token != "-", token != "--" else { return nil }
        if token == "-h" { return ("help", nil) }
        let body = token.hasPrefix("--") ? token.dropFirst(2) : token.dropFirst()
        guard let equals = body.firstIndex(of: "=") else { return (String(body), nil) }
        return (String(body[..<equals]), String(body[body.index(after: equals)...]))
    }

    private func unknownOption(_ token: String, path: String) -> UsageError {
        let shown = token.split(separator: "=", maxSplits: 1).first.map(String.init) ?? token
        return UsageError("unknown option '\(shown)'", commandPath: path, usage: usage(path: path))
    }

    private func needsValue(_ name: String, path: String) -> UsageError {
        UsageError("--\(name) needs a value", commandPath: path, usage: usage(path: path))
    }
}

/// Insertions, deletions, substitutions and swaps of neighbours that turn `a` into `b` (optimal string
/// alignment), for suggesting a command.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
    var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { table[i][0] = i }
    for j in 0...b.count { table[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
            }
        }
    }
    return table[a.count][b.count]
}

/// What the user typed, parsed through a command's declarations and read through them: reading an
/// option or positional the command does not declare is a programming error and stops the program.
public struct ParsedArguments: Sendable {
    /// `loyalty retailer offer set`.
    public let commandPath: String
    let usage: String
    let declared: Set<OptionDeclaration>
    let positionalDeclarations: [PositionalDeclaration]
    var values: [String: [any Sendable]] = [:]
    var flags: Set<String> = []
    private var words: [PositionalDeclaration: [any Sendable]] = [:]

    init(
        commandPath: String, usage: String, declared: Set<OptionDeclaration>,
        positionalDeclarations: [PositionalDeclaration]
    ) {
        self.commandPath = commandPath
        self.usage = usage
        self.declared = declared
        self.positionalDeclarations = positionalDeclarations
    }

    public func flag(_ flag: Flag) -> Bool {
        requireDeclared(flag)
        return flags.contains(flag.declaration.name)
    }

    /// The option's value (the last one given), or nil when it is not given.
    public func value<Value>(_ option: Option<Value>) -> Value? {
        values(option).last
    }

    /// The value of an option declared `required`, which the parser has made sure is given.
    public func required<Value>(_ option: Option<Value>) -> Value {
        precondition(option.declaration.isRequired, "\(commandPath) reads --\(option.declaration.name) as required")
        return value(option)!
    }

    /// What `check` returns; an error it throws becomes a usage error in the error's own words (the
    /// user's input failed a check across options that only the command knows).
    public func checked<Value>(_ check: () throws -> Value) throws(UsageError) -> Value {
        do { return try check() } catch { throw usageError("\(error)") }
    }

    /// Every value of a repeatable option, in order.
    public func values<Value>(_ option: Option<Value>) -> [Value] {
        requireDeclared(option)
        return (values[option.declaration.name] ?? []).map { $0 as! Value }
    }

    /// Whether the option was given at all.
    public func isGiven(_ option: any DeclaredOption) -> Bool {
        requireDeclared(option)
        return values[option.declaration.name] != nil || flags.contains(option.declaration.name)
    }

    /// The words of a positional, as many as its count allows.
    public func words<Value>(_ positional: Positional<Value>) -> [Value] {
        precondition(
            positionalDeclarations.contains(positional.declaration),
            "\(commandPath) reads \(positional.declaration.name), which it does not declare")
        return (words[positional.declaration] ?? []).map { $0 as! Value }
    }

    /// The word of a positional of count one (or nil for an optional one not given).
    public func word<Value>(_ positional: Positional<Value>) -> Value? { words(positional).first }

    /// A usage error of this command, shown with its usage line.
    public func usageError(_ message: String) -> UsageError {
        UsageError(message, commandPath: commandPath, usage: usage)
    }

    private func requireDeclared(_ option: any DeclaredOption) {
        precondition(
            declared.contains(option.declaration),
            "\(commandPath) reads --\(option.declaration.name), which it does not declare")
    }

    /// Deals the words out to the declared positionals in order, each parsed: each takes its minimum, and
    /// the words left over go to the first that can take more.
    mutating func assign(
        _ given: [String], parsers: [PositionalDeclaration: @Sendable (String) throws -> any Sendable]
    ) throws(UsageError) {
        var needed = 0
        for positional in positionalDeclarations {
            needed += positional.minimum
            if given.count < needed { throw usageError("missing \(positional.name)") }
        }
        var spare = given.count - needed
        var index = 0
        var dealt: [(PositionalDeclaration, ArraySlice<String>)] = []
        for positional in positionalDeclarations {
            let extra = min(spare, (positional.maximum ?? Int.max) - positional.minimum)
            spare -= extra
            let taken = positional.minimum + extra
            dealt.append((positional, given[index..<index + taken]))
            index += taken
        }
        if index < given.count { throw usageError("unexpected argument '\(given[index])'") }
        for (positional, texts) in dealt {
            var parsed: [any Sendable] = []
            for text in texts {
                do { parsed.append(try parsers[positional]!(text)) } catch {
                    throw usageError("\(positional.name): \(error)")
                }
            }
            words[positional] = parsed
        }
    }
}
