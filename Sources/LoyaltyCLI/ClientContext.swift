import Arguments
import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// Options every command that talks to the server or reads the cache accepts.
enum ClientOptions {
    static let server = Option<String>(
        "server", value: "URL", help: "Loyalty server (else LOYALTY_SERVER, the config file, http://127.0.0.1:8080).")
    static let connectTimeout = secondsOption("connect-timeout", help: "Give up connecting after this long (default 5).")
    static let timeout = secondsOption("timeout", help: "Give up on a request after this long (default 30).")
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

extension ClientError: CommandError {
    public var exitCode: Int32 {
        switch self {
        case .network: ExitCode.tempFailure
        case .unauthorized: ExitCode.noPermission
        case .server(let status, _, _): status >= 500 ? ExitCode.tempFailure : ExitCode.failure
        case .protocolViolation, .unavailable: ExitCode.unavailable
        case .corruptCache, .io: ExitCode.ioError
        case .configuration, .notRegistered, .notFound: ExitCode.failure
        }
    }
}

// MARK: offers during `loyalty scan`

/// The options `loyalty scan` adds for offers (it has its own --json).
enum OfferScanOptions {
    static let minimumProximity = Option<Proximity>(
        "min-proximity", value: "PROXIMITY",
        help: "Show an offer when its beacon is this near or nearer: immediate, near (default), far.",
        expected: "immediate, near or far"
    ) { Proximity(rawValue: $0).flatMap { $0 == .unknown ? nil : $0 } }
    static let dwell = Option<Double>(
        "dwell", value: "SECONDS",
        help: "With --json: seconds of capture time an offer stays shown before the next (default 5).",
        expected: "a number of seconds, 0 or more"
    ) { Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } }
    static let offline = Flag(
        "offline", help: "Do not contact the server; seen offers wait in the outbox for the next sync.")

    static let all: [any DeclaredOption] = [
        minimumProximity, dwell, offline, ClientOptions.server, ClientOptions.connectTimeout, ClientOptions.timeout,
    ]
}

/// The offers side of a scan, from the scan's arguments: the cache of this device, syncing at start
/// and every minute unless --offline or the device has no account, and redeeming with `r`. With
/// `interactive`, an offer stays until dismissed; otherwise for --dwell seconds. A sync or a redemption
/// under way is abandoned once `interruption` asks.
func openOfferSession(
    _ arguments: ParsedArguments, interactive: Bool, interruption: Interruption? = nil
) throws -> (offers: OfferSession, redemption: ScanRedemption, home: ClientHome, hasAccount: Bool) {
    let context = try ClientContext(arguments)
    if let interruption { context.api.isCancelled = { interruption.isRequested } }
    let minimum = arguments.value(OfferScanOptions.minimumProximity) ?? .near
    let dwell = arguments.value(OfferScanOptions.dwell) ?? 5
    let cache = try context.openCache()
    let hasAccount = try context.home.loadDevice() != nil
    let online = !arguments.flag(OfferScanOptions.offline) && hasAccount
    let offers = try OfferSession(
        cache: cache, minimumProximity: minimum, holding: interactive ? .untilDismissed : .dwell(dwell),
        sync: online ? try context.syncEngine(cache) : nil, deviceClock: Date.init)
    let redeemer = Result { () throws(ClientError) in
        Redeemer(cache: cache, api: context.api, credential: try context.deviceCredential().1, now: Date.init)
    }
    return (offers, ScanRedemption(redeemer), context.home, hasAccount)
}

/// Says that the cached catalog is partial, if it is: on standard error, or as a JSON line.
func warnIfCatalogPartial(_ cache: OfferCache, _ output: CommandOutput) throws(ClientError) {
    guard try cache.catalogIsPartial else { return }
    if output.isJSON { return output.line(ClientJSONLines.catalogPartial) }
    output.error("warning: \(ClientJSONLines.partialCatalogWarning)")
}
