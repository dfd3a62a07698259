import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of `config show` and `config set`.
extension ClientJSONLines {
    /// `config show --json`: never the API key.
    static func config(_ shown: ConfigShown) -> String {
        let config = shown.config
        let preferences = shown.preferences ?? AccountPreferences()
        return object([
            ("event", .string("config")), ("file", .string(shown.file)), ("server", .string(shown.server.text)),
            ("server_from", .string(shown.server.source.rawValue)), ("server_valid", .bool(shown.serverProblem == nil)),
            ("connect_timeout_s", config.connectTimeoutSeconds.map { .double($0) } ?? .null),
            ("total_timeout_s", config.totalTimeoutSeconds.map { .double($0) } ?? .null),
            ("ca_file", config.caFile.map { .string($0) } ?? .null),
            ("scan_power", config.scanPower.map { .string($0.rawValue) } ?? .null),
            ("retailer", config.retailer.map { .string($0.credentials.name) } ?? .null),
            (
                "muted_retailers",
                .array(preferences.mutedRetailers.map(Self.retailer))
            ),
            ("quiet_hours", preferences.quietHours.map { .string($0) } ?? .null),
            ("offers_per_hour", .int(preferences.offersPerHour)), ("offers_per_day", .int(preferences.offersPerDay)),
            ("preferences_synced", .bool(shown.preferences != nil)),
        ])
    }

    /// `config set --json`.
    static func configSet(_ key: String, _ value: JSONValue) -> String {
        object([("event", .string("config_set")), ("key", .string(key)), ("value", value)])
    }

    /// `mute --json` and `unmute --json`.
    static func muted(_ muted: Bool, _ retailer: MutedRetailer) -> String {
        object([
            ("event", .string(muted ? "muted" : "unmuted")),
            ("retailer", Self.retailer(retailer)),
        ])
    }

    private static func retailer(_ retailer: MutedRetailer) -> JSONValue {
        .object([("id", .string(retailer.id.uuidString.lowercased())), ("name", .string(retailer.name))])
    }
}
