import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI

/// The client's settings file (`config.json`, mode 0600: it may hold a retailer API key).
public struct ClientConfig: Codable, Sendable, Equatable {
    public var server: String?
    public var connectTimeoutSeconds: Double?
    public var totalTimeoutSeconds: Double?
    /// A PEM file of the CAs to trust instead of the system's (a private CA's certificate), for https.
    public var caFile: String?
    /// Kept by `loyalty retailer register` and updated by `rotate-key`, with the server that issued the key.
    public var retailer: Issued<RetailerCredentials>?
    /// The radio's duty cycle for scans without `--power`.
    public var scanPower: ScanPower?

    public init(
        server: String? = nil, connectTimeoutSeconds: Double? = nil, totalTimeoutSeconds: Double? = nil,
        caFile: String? = nil, retailer: Issued<RetailerCredentials>? = nil
    ) {
        self.server = server
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.totalTimeoutSeconds = totalTimeoutSeconds
        self.caFile = caFile
        self.retailer = retailer
    }

    public enum CodingKeys: String, CodingKey {
        case server
        case connectTimeoutSeconds = "connect_timeout_s"
        case totalTimeoutSeconds = "total_timeout_s"
        case caFile = "ca_file"
        case retailer
        case scanPower = "scan_power"
    }

    public static let defaultServer = "http://127.0.0.1:8080"

    /// The config's keys, as `loyalty config set` names them.
    public static let keys = ["server", "connect_timeout_s", "total_timeout_s", "ca_file", "scan_power"]

    /// Where the server a command uses was given.
    public enum ServerSource: String, Sendable {
        case flag = "--server"
        case environment = "LOYALTY_SERVER"
        case config
        case `default`
    }

    /// `--server`, else `LOYALTY_SERVER`, else the config file, else `http://127.0.0.1:8080`. Plain http to
    /// another machine only with `plainHTTPAllowed`.
    public func serverURL(flag: String?, environment: [String: String], plainHTTPAllowed: Bool = false)
        throws(ClientError) -> URL
    {
        try Self.validatedServer(serverSetting(flag: flag, environment: environment).text, plainHTTPAllowed: plainHTTPAllowed)
    }

    /// The server's setting that wins, as given, and where it came from.
    public func serverSetting(flag: String?, environment: [String: String]) -> (text: String, source: ServerSource) {
        let settings: [(String?, ServerSource)] = [(flag, .flag), (environment["LOYALTY_SERVER"], .environment), (server, .config)]
        for case (let text?, let source) in settings where !text.isEmpty { return (text, source) }
        return (Self.defaultServer, .default)
    }

    /// `text` as a server URL: http or https with a host; http only to this machine unless `plainHTTPAllowed`.
    public static func validatedServer(_ text: String, plainHTTPAllowed: Bool = false) throws(ClientError) -> URL {
        guard let url = URL(string: text), let origin = ServerOrigin(url) else {
            throw .configuration("'\(text)' is not a server URL: use https://HOST[:PORT] (http:// for this machine)")
        }
        if origin.scheme == "http", !origin.isLoopback, !plainHTTPAllowed { throw .plainHTTP(server: text) }
        return url
    }

    /// The CA file: `--ca-file`, else `LOYALTY_CA_FILE`, else the config's; nil for the system's CAs.
    public func caFile(flag: String?, environment: [String: String]) throws(ClientError) -> String? {
        guard let path = [flag, environment["LOYALTY_CA_FILE"], caFile].lazy.compactMap({ $0 }).first(where: { !$0.isEmpty })
        else { return nil }
        return try Self.validatedCAFile(path)
    }

    /// `path` made absolute, if this user can read it (libcurl would say only "problem with the CA cert").
    public static func validatedCAFile(_ path: String) throws(ClientError) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        guard access(absolute, R_OK) == 0 else {
            throw .configuration("cannot read the CA file \(path): \(String(cString: strerror(errno)))")
        }
        return absolute
    }

    /// Whom credentials kept before issuers were recorded came from: the server the config names (the command
    /// that made them saved it there), else the default.
    var legacyIssuer: ServerOrigin {
        server.flatMap(URL.init(string:)).flatMap(ServerOrigin.init) ?? ServerOrigin(URL(string: Self.defaultServer)!)!
    }

    /// The server that issued `issued`.
    public func issuer<Credentials>(of issued: Issued<Credentials>) -> ServerOrigin {
        issued.issuer ?? legacyIssuer
    }

    /// Refuses to send credentials kept here to a server other than the one that issued them.
    public func check<Credentials>(
        _ issued: Issued<Credentials>, _ kind: ClientError.IssuedCredential, sendingTo server: URL
    ) throws(ClientError) {
        let issuer = issuer(of: issued)
        guard let destination = ServerOrigin(server), destination == issuer else {
            throw .issuedElsewhere(kind, issuer: issuer, server: ServerOrigin(server) ?? issuer)
        }
    }
}

/// The files under a `ClientHome`, read and written whole.
extension ClientHome {
    public func loadConfig() throws(ClientError) -> ClientConfig {
        try decode(ClientConfig.self, from: configFile) ?? ClientConfig()
    }

    /// Credentials kept before issuers were recorded take the config's server as theirs: before a write can
    /// change that server, they are pinned to the one they had.
    public func saveConfig(_ config: ClientConfig) throws(ClientError) {
        var config = config
        let saved = try loadConfig()
        if config.retailer?.issuer == nil { config.retailer?.issuer = saved.legacyIssuer }
        if var device = try? loadDevice(), device.issuer == nil {
            device.issuer = saved.legacyIssuer
            try saveDevice(device)
        }
        try StateFile.write(try encode(config), to: configFile)
    }

    /// This device's credentials and their issuer, or nil before `loyalty account create` / `link CODE`.
    public func loadDevice() throws(ClientError) -> Issued<DeviceCredentials>? {
        try decode(Issued<DeviceCredentials>.self, from: deviceFile)
    }

    public func saveDevice(_ device: Issued<DeviceCredentials>) throws(ClientError) {
        try StateFile.write(try encode(device), to: deviceFile)
    }

    /// The credentials, or a `notRegistered` error saying how to get them.
    public func requireDevice() throws(ClientError) -> DeviceCredentials {
        guard let device = try loadDevice() else {
            throw .notRegistered(.account)
        }
        return device.credentials
    }

    /// This device's token, to be sent to `server`: refused unless that server issued it.
    public func deviceCredential(sendingTo server: URL) throws(ClientError) -> (DeviceCredentials, Credential) {
        guard let device = try loadDevice() else { throw .notRegistered(.account) }
        try loadConfig().check(device, .deviceToken, sendingTo: server)
        return (device.credentials, .device(device.credentials.deviceToken))
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

extension ClientHome {
    /// `loyalty config set server URL`: the credentials kept here go only to the server that issued them, so
    /// while one is another server's the config is not pointed at `server`, unless `movingCredentials` (the same
    /// server at a new address): then they are bound to it. Answers the credentials that moved.
    public func setServer(_ server: URL, movingCredentials: Bool) throws(ClientError) -> [ClientError.IssuedCredential] {
        guard let origin = ServerOrigin(server) else { throw .configuration("'\(server)' is not a server URL") }
        var config = try loadConfig()
        var device = try loadDevice()
        var moved: [ClientError.IssuedCredential] = []
        if let issued = device, config.issuer(of: issued) != origin {
            guard movingCredentials else { throw .issuedElsewhere(.deviceToken, issuer: config.issuer(of: issued), server: origin) }
            device?.issuer = origin
            moved.append(.deviceToken)
        }
        if let issued = config.retailer, config.issuer(of: issued) != origin {
            guard movingCredentials else { throw .issuedElsewhere(.retailerKey, issuer: config.issuer(of: issued), server: origin) }
            config.retailer?.issuer = origin
            moved.append(.retailerKey)
        }
        if let device, moved.contains(.deviceToken) { try saveDevice(device) }
        config.server = server.absoluteString
        try saveConfig(config)
        return moved
    }
}
