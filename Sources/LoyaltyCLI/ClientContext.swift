import Arguments
import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// Options every command that talks to the server or reads the cache accepts.
enum ClientOptions {
    static let server = Option<String>(
        "server", value: "URL", help: "Loyalty server (else LOYALTY_SERVER, the config file, http://127.0.0.1:8080).")
    static let connectTimeout = Option<Double>.seconds("connect-timeout", help: "Give up connecting after this long (default 5).")
    static let timeout = Option<Double>.seconds("timeout", help: "Give up on a request after this long (default 30).")
    static let json = Flag("json", help: "Print JSON lines instead of text (also in a pipe: text without it).")
    static let caFile = Option<String>(
        "ca-file", value: "PEM", help: "Trust the CAs in this file for https (else LOYALTY_CA_FILE, the config's ca_file).")
    static let insecureHTTP = Flag(
        "insecure-http", help: "Allow plain http to a server that is not this machine (also LOYALTY_INSECURE_HTTP=1).")

    /// What a command that talks to the server takes besides --json (the scan has its own).
    static let network: [any DeclaredOption] = [server, connectTimeout, timeout, caFile, insecureHTTP]
    static let all: [any DeclaredOption] = network + [json]

    /// Whether plain http to another machine was allowed for this command: --insecure-http or LOYALTY_INSECURE_HTTP=1.
    static func plainHTTPAllowed(_ arguments: ParsedArguments, _ environment: [String: String]) -> Bool {
        arguments.flag(insecureHTTP) || environment["LOYALTY_INSECURE_HTTP"] == "1"
    }
}

let clientDiscussion = """
    State lives in $LOYALTY_HOME, else ~/.config/loyalty (config, device token) and
    ~/.local/share/loyalty (cache).

    \(ExitCode.helpText)
    """

/// What a client command needs: where state lives, the settings, the server, the cache.
struct ClientContext {
    let arguments: ParsedArguments
    let environment: [String: String]
    let home: ClientHome
    let config: ClientConfig
    let api: LoyaltyAPIClient
    /// Text, or JSON lines with --json.
    let output: CommandOutput
    /// Where the server in use was given (--server, LOYALTY_SERVER, the config, the default).
    let serverSource: ClientConfig.ServerSource

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        environment = CommandScope.environment
        output = CommandScope.output(json: arguments.flag(ClientOptions.json))
        home = try ClientHome(environment: environment)
        for change in home.narrowPermissions() { output.error("note: \(change)") }
        config = try home.loadConfig()
        let timeouts = Timeouts(
            connect: arguments.value(ClientOptions.connectTimeout) ?? config.connectTimeoutSeconds ?? 5,
            total: arguments.value(ClientOptions.timeout) ?? config.totalTimeoutSeconds ?? 30)
        api = try Self.api(config, arguments, environment, timeouts)
        serverSource = config.serverSetting(flag: arguments.value(ClientOptions.server), environment: environment).source
        if let origin = api.origin, origin.scheme == "http", !origin.isLoopback {
            output.error("warning: \(ClientText.plainHTTPWarning(origin))")
        }
    }

    /// A URL that is not one, plain http to another machine unasked, or a CA file that cannot be read is a
    /// usage error (64), whichever setting gave it; nothing has been sent.
    private static func api(
        _ config: ClientConfig, _ arguments: ParsedArguments, _ environment: [String: String], _ timeouts: Timeouts
    ) throws -> LoyaltyAPIClient {
        let plainHTTPAllowed = ClientOptions.plainHTTPAllowed(arguments, environment)
        let server = try arguments.checked {
            try config.serverURL(
                flag: arguments.value(ClientOptions.server), environment: environment, plainHTTPAllowed: plainHTTPAllowed)
        }
        let caFile = try arguments.checked {
            try config.caFile(flag: arguments.value(ClientOptions.caFile), environment: environment)
        }
        return LoyaltyAPIClient(server: server, timeouts: timeouts, caFile: caFile)
    }

    func openCache() throws(ClientError) -> OfferCache {
        try OfferCache(file: home.cacheFile)
    }

    /// This device's token, or an error telling how to get one, or that this server did not issue it.
    func deviceCredential() throws(ClientError) -> (DeviceCredentials, Credential) {
        try home.deviceCredential(sendingTo: api.server)
    }

    func syncEngine(_ cache: OfferCache) throws(ClientError) -> SyncEngine {
        SyncEngine(cache: cache, api: api, credential: try deviceCredential().1, now: Date.init)
    }
}

/// Runs a client command in its context.
func clientCommand(_ body: @escaping @Sendable (ClientContext) throws -> Void)
    -> @Sendable (ParsedArguments) throws -> Void
{
    { arguments in try body(try ClientContext(arguments)) }
}

/// Says that the cached catalog is partial, if it is: on standard error, or as a JSON line.
func warnIfCatalogPartial(_ cache: OfferCache, _ output: CommandOutput) throws(ClientError) {
    guard try cache.catalogIsPartial else { return }
    if output.isJSON { return output.line(ClientJSONLines.catalogPartial) }
    output.error("warning: \(ClientJSONLines.partialCatalogWarning)")
}
