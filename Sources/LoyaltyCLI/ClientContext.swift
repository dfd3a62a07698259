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

    static let all: [any DeclaredOption] = [server, connectTimeout, timeout, json]
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
        api = LoyaltyAPIClient(
            server: try Self.serverURL(config, arguments, environment),
            timeouts: timeouts)
        serverSource = config.serverSetting(flag: arguments.value(ClientOptions.server), environment: environment).source
    }

    /// A URL that is not one is a usage error (64), whichever setting gave it.
    private static func serverURL(
        _ config: ClientConfig, _ arguments: ParsedArguments, _ environment: [String: String]
    ) throws -> URL {
        try arguments.checked {
            try config.serverURL(flag: arguments.value(ClientOptions.server), environment: environment)
        }
    }

    func openCache() throws(ClientError) -> OfferCache {
        try OfferCache(file: home.cacheFile)
    }

    /// This device's token, or an error telling how to get one.
    func deviceCredential() throws(ClientError) -> (DeviceCredentials, Credential) {
        let device = try home.requireDevice()
        return (device, .device(device.deviceToken))
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
