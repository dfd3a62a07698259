import Arguments
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

private enum ConfigWords {
    static let key = Positional("KEY")
    static let value = Positional("VALUE")
}

private let configKeysText = """
    The config file (config.json in $LOYALTY_HOME, else ~/.config/loyalty; mode 0600) holds:
      server             the server's URL: saved by `account create`, `account link` and
                         `retailer register`, used when neither --server nor LOYALTY_SERVER is given
                         (else http://127.0.0.1:8080)
      connect_timeout_s  seconds to give up connecting (default 5; --connect-timeout wins)
      total_timeout_s    seconds to give up on a request (default 30; --timeout wins)
      retailer           the retailer's id, name, proximity UUID and API key (`retailer register`,
                         `retailer key set`; `retailer key show` prints the key)
    """

let configCommand = Command(
    name: "config",
    summary: "Show or change the client's settings: the server, the timeouts.",
    discussion: configKeysText,
    subcommands: [configShow, configSet])

private let configShow = Command(
    name: "show", summary: "Show the settings and where the server in use comes from (works offline).",
    discussion: """
        The server in use is --server, else LOYALTY_SERVER, else the config's, else http://127.0.0.1:8080:
        the line says which. The retailer's API key is never shown here.

        \(configKeysText)
        """,
    options: [ClientOptions.server, ClientOptions.json],
    run: { arguments in
        let environment = CommandScope.environment
        let home = try ClientHome(environment: environment)
        let config = try home.loadConfig()
        let server = config.serverSetting(flag: arguments.value(ClientOptions.server), environment: environment)
        let problem = Result { () throws(ClientError) in try ClientConfig.validatedServer(server.text) }
        let shown = ConfigShown(file: home.configFile.path, config: config, server: server, serverProblem: problem.failure)
        CommandScope.output(json: arguments.flag(ClientOptions.json)).emit(
            text: ClientText.config(shown), json: ClientJSONLines.config(shown))
    })

private let configSet = Command(
    name: "set", summary: "Set one key of the config file: server, connect_timeout_s or total_timeout_s.",
    discussion: """
        `loyalty config set server https://loyalty.example.com` points every later command at that server
        (a URL that is not http or https with a host is refused, exit 64). The timeouts take seconds
        greater than 0.

        \(configKeysText)
        """,
    options: [ClientOptions.json], positionals: [ConfigWords.key, ConfigWords.value],
    run: { arguments in
        let environment = CommandScope.environment
        let output = CommandScope.output(json: arguments.flag(ClientOptions.json))
        let home = try ClientHome(environment: environment)
        var config = try home.loadConfig()
        let key = arguments.word(ConfigWords.key) ?? ""
        let value = (arguments.word(ConfigWords.value) ?? "").trimmingCharacters(in: .whitespaces)
        let saved: JSONValue
        switch key {
        case "server":
            _ = try arguments.checked { try ClientConfig.validatedServer(value) }
            config.server = value
            saved = .string(value)
        case "connect_timeout_s", "total_timeout_s":
            guard let seconds = positiveSeconds(value) else {
                throw arguments.usageError("\(key) takes seconds greater than 0, not '\(value)'")
            }
            if key == "connect_timeout_s" { config.connectTimeoutSeconds = seconds } else { config.totalTimeoutSeconds = seconds }
            saved = .double(seconds)
        default:
            throw arguments.usageError(
                "'\(key)' is not a key of the config: use \(ClientConfig.keys.joined(separator: ", "))")
        }
        try home.saveConfig(config)
        output.emit(text: "\(key) set to \(value) in \(home.configFile.path)", json: ClientJSONLines.configSet(key, saved))
        if key == "server", let overriding = environment["LOYALTY_SERVER"], !overriding.isEmpty, overriding != value {
            output.error("note: LOYALTY_SERVER (\(overriding)) is set, and wins over the config while it is")
        }
    })

/// What `config show` says.
struct ConfigShown {
    let file: String
    let config: ClientConfig
    let server: (text: String, source: ClientConfig.ServerSource)
    let serverProblem: ClientError?
}

extension ClientText {
    /// `config show`.
    static func config(_ shown: ConfigShown) -> String {
        let config = shown.config
        let problem = shown.serverProblem.map { "; \($0.description)" } ?? ""
        let retailer =
            config.retailer.map {
                "\(TerminalText.escaped($0.name)), beacons \($0.uuid.uuidString) (API key saved: `loyalty retailer key show` prints it)"
            } ?? "-"
        func seconds(_ value: Double?, default fallback: Int) -> String {
            value.map { String(format1: $0) } ?? "\(fallback) (default)"
        }
        return """
            file               \(shown.file)
            server             \(serverInUse(shown.server.text, shown.server.source, saved: config.server, problem: problem))
            connect_timeout_s  \(seconds(config.connectTimeoutSeconds, default: 5))
            total_timeout_s    \(seconds(config.totalTimeoutSeconds, default: 30))
            retailer           \(retailer)
            """
    }

    /// The server in use and where it was given, with the config's when another wins over it:
    /// `http://a:1 (from LOYALTY_SERVER; saved: http://b:2)`.
    static func serverInUse(
        _ server: String, _ source: ClientConfig.ServerSource, saved: String?, problem: String = ""
    ) -> String {
        let given =
            switch source {
            case .flag: "from --server"
            case .environment: "from LOYALTY_SERVER"
            case .config: "from the config"
            case .default: "the default"
            }
        let overridden = saved.flatMap { source == .config || $0 == server ? nil : "; saved: \($0)" } ?? ""
        return TerminalText.escaped("\(server) (\(given)\(overridden)\(problem))")
    }
}

extension ClientJSONLines {
    /// `config show --json`: never the API key.
    static func config(_ shown: ConfigShown) -> String {
        let config = shown.config
        return object([
            ("event", .string("config")), ("file", .string(shown.file)), ("server", .string(shown.server.text)),
            ("server_from", .string(shown.server.source.rawValue)), ("server_valid", .bool(shown.serverProblem == nil)),
            ("connect_timeout_s", config.connectTimeoutSeconds.map { .double($0) } ?? .null),
            ("total_timeout_s", config.totalTimeoutSeconds.map { .double($0) } ?? .null),
            ("retailer", config.retailer.map { .string($0.name) } ?? .null),
        ])
    }

    /// `config set --json`.
    static func configSet(_ key: String, _ value: JSONValue) -> String {
        object([("event", .string("config_set")), ("key", .string(key)), ("value", value)])
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
