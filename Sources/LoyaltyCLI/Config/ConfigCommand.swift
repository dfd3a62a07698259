import Arguments
import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

private enum ConfigWords {
    static let key = Positional("KEY")
    static let value = Positional("VALUE")
    static let moveCredentials = Flag(
        "move-credentials",
        help: "With server: send this device's token and the retailer key to the new URL from now on (the same server moved).")
}

private let configKeysText = """
    The config file (config.json in $LOYALTY_HOME, else ~/.config/loyalty; mode 0600) holds:
      server             the server's URL: saved by `account create`, `account link` and
                         `retailer register`, used when neither --server nor LOYALTY_SERVER is given
                         (else http://127.0.0.1:8080)
      connect_timeout_s  seconds to give up connecting (default 5; --connect-timeout wins)
      total_timeout_s    seconds to give up on a request (default 30; --timeout wins)
      ca_file            a PEM file of the CAs to trust for https instead of the system's, for a
                         server whose certificate a private CA signed (--ca-file and LOYALTY_CA_FILE win)
      scan_power         the radio's duty cycle for `loyalty scan` without --power: high, balanced or
                         low (default high; the user unit's low, LOYALTY_SCAN_POWER_DEFAULT, yields to it)
      retailer           the retailer's id, name, proximity UUID and API key (`retailer register`,
                         `retailer key set`; `retailer key show` prints the key)
    """

let configCommand = Command(
    name: "config",
    summary: "Show or change the client's settings: the server, the timeouts, the CA file.",
    discussion: configKeysText,
    subcommands: [configShow, configSet])

private let configShow = Command(
    name: "show", summary: "Show the settings and where the server in use comes from (works offline).",
    discussion: """
        The server in use is --server, else LOYALTY_SERVER, else the config's, else http://127.0.0.1:8080:
        the line says which. The retailer's API key is never shown here.

        \(configKeysText)
        """,
    options: [ClientOptions.server, ClientOptions.insecureHTTP, ClientOptions.json],
    run: { arguments in
        let environment = CommandScope.environment
        let home = try ClientHome(environment: environment)
        let config = try home.loadConfig()
        let server = config.serverSetting(flag: arguments.value(ClientOptions.server), environment: environment)
        let problem = Result { () throws(ClientError) in
            try ClientConfig.validatedServer(
                server.text, plainHTTPAllowed: ClientOptions.plainHTTPAllowed(arguments, environment))
        }
        let shown = ConfigShown(file: home.configFile.path, config: config, server: server, serverProblem: problem.failure)
        CommandScope.output(json: arguments.flag(ClientOptions.json)).emit(
            text: ClientText.config(shown), json: ClientJSONLines.config(shown))
    })

private let configSet = Command(
    name: "set", summary: "Set one key of the config file: server, connect_timeout_s, total_timeout_s, ca_file or scan_power.",
    discussion: """
        `loyalty config set server https://loyalty.example.com` points every later command at that server
        (a URL that is not http or https with a host is refused, exit 64; so is plain http to another
        machine without --insecure-http). The timeouts take seconds greater than 0; ca_file a PEM file
        this user can read.

        A device token and a retailer API key are sent only to the server that issued them (scheme, host
        and port), so while this folder holds another server's, `config set server` refuses (exit 77).
        When it is the same server at a new address (moved behind HAProxy with https, say), add
        --move-credentials: they go to the new URL from then on. For an account on another server,
        use another LOYALTY_HOME.

        \(configKeysText)
        """,
    options: [ConfigWords.moveCredentials, ClientOptions.insecureHTTP, ClientOptions.json],
    positionals: [ConfigWords.key, ConfigWords.value],
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
            let url = try arguments.checked {
                try ClientConfig.validatedServer(value, plainHTTPAllowed: ClientOptions.plainHTTPAllowed(arguments, environment))
            }
            let moved = try home.setServer(url, movingCredentials: arguments.flag(ConfigWords.moveCredentials))
            output.emit(text: "server set to \(value) in \(home.configFile.path)", json: ClientJSONLines.configSet(key, .string(value)))
            for credential in moved { output.error("note: \(ClientText.moved(credential, to: url))") }
            if let overriding = environment["LOYALTY_SERVER"], !overriding.isEmpty, overriding != value {
                output.error("note: LOYALTY_SERVER (\(overriding)) is set, and wins over the config while it is")
            }
            return
        case "ca_file":
            let path = try arguments.checked { try ClientConfig.validatedCAFile(value) }
            config.caFile = path
            saved = .string(path)
        case "scan_power":
            guard let power = ScanPower(rawValue: value) else {
                throw arguments.usageError("scan_power takes high, balanced or low, not '\(value)'")
            }
            config.scanPower = power
            saved = .string(value)
        case "connect_timeout_s", "total_timeout_s":
            guard let seconds = Option<Double>.positiveSeconds(value) else {
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
    })

/// What `config show` says.
struct ConfigShown {
    let file: String
    let config: ClientConfig
    let server: (text: String, source: ClientConfig.ServerSource)
    let serverProblem: ClientError?
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
