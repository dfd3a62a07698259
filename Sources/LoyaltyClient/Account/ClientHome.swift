import Foundation

/// Where the client keeps its state.
///
/// With `$LOYALTY_HOME` everything lives in that one directory (handy for tests and for a second
/// "device" on the same machine). Otherwise the XDG base directories: configuration and secrets under
/// `$XDG_CONFIG_HOME/loyalty` (`~/.config/loyalty`), the cache under `$XDG_DATA_HOME/loyalty`
/// (`~/.local/share/loyalty`).
public struct ClientHome: Sendable, Equatable {
    public var configDirectory: URL
    public var dataDirectory: URL

    public init(configDirectory: URL, dataDirectory: URL) {
        self.configDirectory = configDirectory
        self.dataDirectory = dataDirectory
    }

    /// The directories `environment` names (`LOYALTY_HOME`, `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `HOME`).
    public init(environment: [String: String]) throws(ClientError) {
        if let home = environment["LOYALTY_HOME"], !home.isEmpty {
            let directory = URL(fileURLWithPath: home, isDirectory: true)
            self.init(configDirectory: directory, dataDirectory: directory)
            return
        }
        func base(_ variable: String, _ fallback: String) throws(ClientError) -> URL {
            if let value = environment[variable], value.hasPrefix("/") {
                return URL(fileURLWithPath: value, isDirectory: true)
            }
            guard let home = environment["HOME"], !home.isEmpty else {
                throw .configuration(
                    "neither LOYALTY_HOME nor HOME is set: set LOYALTY_HOME to a directory for the client's state")
            }
            return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(fallback, isDirectory: true)
        }
        self.init(
            configDirectory: try base("XDG_CONFIG_HOME", ".config").appendingPathComponent(
                "loyalty", isDirectory: true),
            dataDirectory: try base("XDG_DATA_HOME", ".local/share").appendingPathComponent(
                "loyalty", isDirectory: true))
    }

    /// Server URL, timeouts and the retailer's API key (mode 0600).
    public var configFile: URL { configDirectory.appendingPathComponent("config.json") }
    /// This device's account, id and token (mode 0600).
    public var deviceFile: URL { configDirectory.appendingPathComponent("device.json") }
    /// The SQLite cache: catalog, seen set, outbox, redemptions.
    public var cacheFile: URL { dataDirectory.appendingPathComponent("cache.sqlite") }

    /// Device tokens, the retailer's key and unspent till codes live here, so the folders are 0700 and the files
    /// 0600 (the cache's journals and a damaged cache moved aside included). Those made before that rule, or by
    /// hand, are narrowed when a command starts: returns one line per change, to be said once (the next command
    /// finds nothing to narrow).
    public func narrowPermissions() -> [String] {
        let cache = cacheFile.path
        let files =
            [configFile.path, deviceFile.path, cache, cache + OfferCache.setAsideSuffix]
            + OfferCache.journalSuffixes.map { cache + $0 }
        return (Set([configDirectory.path, dataDirectory.path]).sorted() + files).compactMap(StateFile.narrow)
    }
}
