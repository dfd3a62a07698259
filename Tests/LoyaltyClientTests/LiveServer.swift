import Foundation
import HTTPServer
import LoyaltyAPI
import LoyaltyClient
import LoyaltyServer
import Postgres

/// A real loyalty server in this process: its own database in the shared throwaway PostgreSQL
/// cluster, served over loopback on an ephemeral port.
final class LiveServer {
    static let operatorToken = "test-operator-token"

    let url: URL
    let api: LoyaltyAPIClient
    private let http: HTTPServer

    /// `clockSkew` puts the server's clock that many seconds ahead of this machine's.
    init(clockSkew: Double = 0) throws {
        let postgres = try EmbeddedPostgres.shared()
        let conninfo = try postgres.createDatabase("client_\(UUID().uuidString.prefix(8).lowercased())")
        let store = Store(pool: PostgresPool(conninfo: conninfo, size: 4)) { Date().addingTimeInterval(clockSkew) }
        _ = try store.migrate(to: Documents.schema)
        let service = LoyaltyService(
            store: store, operatorToken: Self.operatorToken, openAPIDocument: [], rateLimits: .unlimited, log: { _ in })
        http = try HTTPServer(
            host: "127.0.0.1", port: 0, reject: service.reject, handler: service.handle, diagnostics: { _ in })
        url = URL(string: "http://127.0.0.1:\(http.port)")!
        api = LoyaltyAPIClient(server: url, timeouts: Timeouts(connect: 2, total: 10))
    }

    deinit { http.shutdown(gracePeriod: .seconds(1)) }

    /// Registers a retailer and returns its key credential.
    func retailer(_ name: String, uuid: UUID? = nil) throws -> (RetailerCredentials, Credential) {
        let credentials = try api.registerRetailer(
            RetailerRegistration(name: name, uuid: uuid), .operator(Self.operatorToken))
        return (credentials, .retailer(credentials.apiKey))
    }
}

/// One shopper device: its own state directory and cache.
struct ShopperDevice {
    let home: ClientHome
    let cache: OfferCache
    let credential: Credential
    let device: DeviceCredentials

    init(_ device: DeviceCredentials) throws {
        let directory = try temporaryDirectory()
        home = ClientHome(configDirectory: directory, dataDirectory: directory)
        cache = try OfferCache(file: home.cacheFile)
        credential = .device(device.deviceToken)
        self.device = device
    }

    func syncEngine(_ server: LiveServer) -> SyncEngine {
        SyncEngine(cache: cache, api: server.api, credential: credential, now: Date.init)
    }
}
