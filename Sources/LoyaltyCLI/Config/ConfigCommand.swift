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

    The account's attention settings are kept by the server, the same on every device of the account
    (each fetches them at sync; `config show` shows them as last fetched). `config set` changes them
    on the server:
      quiet_hours        HH:MM-HH:MM in this device's local time (21:00-08:00 wraps midnight), or off:
                         offers near then are held, and show when the hours end if still near and valid
      offers_per_hour    at most this many offers show in any 60 minutes, across retailers (default 20)
      offers_per_day     at most this many in any 24 hours (default 50); 0 shows none
      muted              `loyalty mute RETAILER` and `loyalty unmute RETAILER` change it
    """

let configCommand = Command(
    name: "config",
    summary: "Show or change the client's settings: the server, the timeouts, the CA file, quiet hours and caps.",
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
        // As the last sync fetched them; a device that never synced has no cache, and none is made here.
        let preferences =
            FileManager.default.fileExists(atPath: home.cacheFile.path)
            ? try OfferCache(file: home.cacheFile).preferences : nil
        let shown = ConfigShown(
            file: home.configFile.path, config: config, server: server, serverProblem: problem.failure,
            preferences: preferences)
        CommandScope.output(json: arguments.flag(ClientOptions.json)).emit(
            text: ClientText.config(shown), json: ClientJSONLines.config(shown))
    })

private let configSet = Command(
    name: "set",
    summary:
        "Set one key: server, connect_timeout_s, total_timeout_s, ca_file, scan_power; or the account's quiet_hours, offers_per_hour, offers_per_day.",
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
    options: [ConfigWords.moveCredentials] + ClientOptions.all,
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
        case "quiet_hours", "offers_per_hour", "offers_per_day":
            return try setAttention(key, value, arguments)
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
                "'\(key)' is not a key of the config: use \((ClientConfig.keys + attentionKeys).joined(separator: ", "))")
        }
        try home.saveConfig(config)
        output.emit(text: "\(key) set to \(value) in \(home.configFile.path)", json: ClientJSONLines.configSet(key, saved))
    })

/// The keys `config set` sends to the server: the account's, not this device's.
private let attentionKeys = ["quiet_hours", "offers_per_hour", "offers_per_day"]

/// `config set quiet_hours|offers_per_hour|offers_per_day VALUE`: checked here, then changed on the server from
/// what it holds now (another device may have changed the rest), and kept in the cache.
private func setAttention(_ key: String, _ value: String, _ arguments: ParsedArguments) throws {
    let change: (inout PreferenceSettings) -> Void
    let saved: JSONValue
    let shown: String
    if key == "quiet_hours" {
        let quiet =
            ["off", "none"].contains(value.lowercased())
            ? nil : try arguments.checked { () throws(ValidationError) in try QuietHours(parsing: value, field: key) }
        change = { $0.quietHours = quiet?.description }
        saved = quiet.map { .string($0.description) } ?? .null
        shown = quiet?.description ?? "off"
    } else {
        guard let cap = Int(value), PreferenceSettings.capRange.contains(cap) else {
            throw arguments.usageError(
                "\(key) takes a whole number from \(PreferenceSettings.capRange.lowerBound) to \(PreferenceSettings.capRange.upperBound), not '\(value)'"
            )
        }
        change = { settings in if key == "offers_per_hour" { settings.offersPerHour = cap } else { settings.offersPerDay = cap } }
        saved = .int(cap)
        shown = String(cap)
    }
    let context = try ClientContext(arguments)
    let credential = try context.deviceCredential().1
    var settings = try context.api.preferences(credential).settings
    change(&settings)
    let preferences = try context.api.putPreferences(settings, credential)
    try context.openCache().setPreferences(preferences)
    context.output.emit(
        text: "\(key) set to \(shown) for this account: every device of it obeys from its next sync",
        json: ClientJSONLines.configSet(key, saved))
}

/// What `config show` says.
struct ConfigShown {
    let file: String
    let config: ClientConfig
    let server: (text: String, source: ClientConfig.ServerSource)
    let serverProblem: ClientError?
    /// The account's attention settings as the last sync fetched them; nil before.
    let preferences: AccountPreferences?
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
