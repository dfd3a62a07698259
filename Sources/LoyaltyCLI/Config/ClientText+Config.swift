import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// What `config show` prints, and how a server setting is named wherever it is shown.
extension ClientText {
    /// `config show`.
    static func config(_ shown: ConfigShown) -> String {
        let config = shown.config
        let problem = shown.serverProblem.map { "; \($0.description)" } ?? ""
        let retailer =
            config.retailer.map {
                "\(TerminalText.escaped($0.credentials.name)), beacons \($0.credentials.uuid.uuidString) (API key of \(config.issuer(of: $0)) saved: `loyalty retailer key show` prints it)"
            } ?? "-"
        func seconds(_ value: Double?, default fallback: Int) -> String {
            value.map { String(format1: $0) } ?? "\(fallback) (default)"
        }
        return """
            file               \(shown.file)
            server             \(serverInUse(shown.server.text, shown.server.source, saved: config.server, problem: problem))
            connect_timeout_s  \(seconds(config.connectTimeoutSeconds, default: 5))
            total_timeout_s    \(seconds(config.totalTimeoutSeconds, default: 30))
            ca_file            \(config.caFile.map(TerminalText.escaped) ?? "- (the system's CAs)")
            scan_power         \(config.scanPower?.rawValue ?? "- (high; the user unit's low)")
            retailer           \(retailer)
            \(attention(shown.preferences))
            """
    }

    /// The account's attention settings in `config show`, as last fetched (the defaults before the first sync).
    private static func attention(_ fetched: AccountPreferences?) -> String {
        let preferences = fetched ?? AccountPreferences()
        let unsynced = fetched == nil ? " (default; not synced yet)" : ""
        let muted = preferences.mutedRetailers.map { TerminalText.escaped($0.name) }.joined(separator: ", ")
        return """
            muted              \(muted.isEmpty ? "-" : muted)
            quiet_hours        \(preferences.quietHours.map { "\($0) (this device's local time)" } ?? "-")
            offers_per_hour    \(preferences.offersPerHour)\(unsynced)
            offers_per_day     \(preferences.offersPerDay)\(unsynced)
            """
    }

    /// Said on standard error by every command that speaks plain http to another machine (allowed by
    /// --insecure-http or LOYALTY_INSECURE_HTTP=1).
    static func plainHTTPWarning(_ server: ServerOrigin) -> String {
        "plain http to \(server) (--insecure-http or LOYALTY_INSECURE_HTTP): tokens and keys cross the network unencrypted"
    }

    /// `config set server URL --move-credentials`, for each credential it moved.
    static func moved(_ credential: ClientError.IssuedCredential, to server: URL) -> String {
        let what = credential == .deviceToken ? "this device's token" : "the retailer API key"
        return TerminalText.escaped("\(what) will be sent to \(server.absoluteString) from now on")
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

extension ClientText {
    /// `loyalty mute` and `unmute`.
    static func muted(_ muted: Bool, _ name: String) -> String {
        let retailer = TerminalText.escaped(name)
        return muted
            ? "muted \(retailer): its offers show on no device of this account (`loyalty unmute` undoes it)"
            : "unmuted \(retailer): its offers show again"
    }
}
