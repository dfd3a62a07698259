import Foundation
import JSONCoding
import LoyaltyAPI

/// The client's settings file (`config.json`, mode 0600: it may hold a retailer API key).
public struct ClientConfig: Codable, Sendable, Equatable {
    public var server: String?
    public var connectTimeoutSeconds: Double?
    public var totalTimeoutSeconds: Double?
    /// Kept by `loyalty retailer register` and updated by `rotate-key`.
    public var retailer: RetailerCredentials?

    public init(
        server: String? = nil, connectTimeoutSeconds: Double? = nil, totalTimeoutSeconds: Double? = nil,
        retailer: RetailerCredentials? = nil
    ) {
        self.server = server
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.totalTimeoutSeconds = totalTimeoutSeconds
        self.retailer = retailer
    }

    public enum CodingKeys: String, CodingKey {
        case server
        case connectTimeoutSeconds = "connect_timeout_s"
        case totalTimeoutSeconds = "total_timeout_s"
        case retailer
    }

    public static let defaultServer = "http://127.0.0.1:8080"

    /// The config's keys, as `loyalty config set` names them.
    public static let keys = ["server", "connect_timeout_s", "total_timeout_s"]

    /// Where the server a command uses was given.
    public enum ServerSource: String, Sendable {
        case flag = "--server"
        case environment = "LOYALTY_SERVER"
        case config
        case `default`
    }

    /// `--server`, else `LOYALTY_SERVER`, else the config file, else `http://127.0.0.1:8080`.
    public func serverURL(flag: String?, environment: [String: String]) throws(ClientError) -> URL {
        try Self.validatedServer(serverSetting(flag: flag, environment: environment).text)
    }

    /// The server's setting that wins, as given, and where it came from.
    public func serverSetting(flag: String?, environment: [String: String]) -> (text: String, source: ServerSource) {
        let settings: [(String?, ServerSource)] = [(flag, .flag), (environment["LOYALTY_SERVER"], .environment), (server, .config)]
        for case (let text?, let source) in settings where !text.isEmpty { return (text, source) }
        return (Self.defaultServer, .default)
    }

    /// `text` as a server URL: http or https with a host.
    public static func validatedServer(_ text: String) throws(ClientError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host != nil
        else {
            throw .configuration("'\(text)' is not a server URL: use http://HOST:PORT")
        }
        return url
    }
}

/// The files under a `ClientHome`, read and written whole.
extension ClientHome {
    public func loadConfig() throws(ClientError) -> ClientConfig {
        try decode(ClientConfig.self, from: configFile) ?? ClientConfig()
    }

    public func saveConfig(_ config: ClientConfig) throws(ClientError) {
        try StateFile.write(try encode(config), to: configFile)
    }

    /// This device's credentials, or nil before `loyalty account create` / `link CODE`.
    public func loadDevice() throws(ClientError) -> DeviceCredentials? {
        try decode(DeviceCredentials.self, from: deviceFile)
    }

    public func saveDevice(_ device: DeviceCredentials) throws(ClientError) {
        try StateFile.write(try encode(device), to: deviceFile)
    }

    /// The credentials, or a `notRegistered` error saying how to get them.
    public func requireDevice() throws(ClientError) -> DeviceCredentials {
        guard let device = try loadDevice() else {
            throw .notRegistered(.account)
        }
        return device
    }

    private func decode<T: Decodable>(_ type: T.Type, from url: URL) throws(ClientError) -> T? {
        guard let data = try StateFile.read(url) else { return nil }
        do {
            return try LoyaltyJSON.decoder().decode(type, from: data)
        } catch {
            throw .configuration("\(url.path) is not valid: fix or remove it (\(error))")
        }
    }

    private func encode<T: Encodable>(_ value: T) throws(ClientError) -> Data {
        do {
            let encoder = LoyaltyJSON.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            return try encoder.encode(value)
        } catch {
            throw .io("cannot encode settings: \(error)")
        }
    }
}
