import Foundation
import LoyaltyAPI
import LoyaltyClient
import LoyaltyTesting

extension TestServer {
    /// A client of this server; the client speaks HTTP through libcurl, so the server runs `.socket`.
    var api: LoyaltyAPIClient {
        LoyaltyAPIClient(server: URL(string: baseURL)!, timeouts: Timeouts(connect: 2, total: 10))
    }

    /// Registers a retailer and returns its key credential.
    func retailer(_ name: String, uuid: UUID? = nil) throws -> (RetailerCredentials, Credential) {
        let credentials = try api.registerRetailer(
            RetailerRegistration(name: name, uuid: uuid), .operator(operatorToken))
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

    func syncEngine(_ server: TestServer) -> SyncEngine {
        SyncEngine(cache: cache, api: server.api, credential: credential, now: Date.init)
    }
}
