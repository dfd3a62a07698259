import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyClient

/// Credentials go back only to the server that issued them, and plain http only to this machine (issue 41,
/// items 5 and 6).
@Suite struct CredentialOriginTests {
    static let here = URL(string: "http://127.0.0.1:8080")!
    static let other = URL(string: "http://127.0.0.1:9090")!
    static let device = DeviceCredentials(accountID: UUID(), deviceID: UUID(), deviceToken: "ld_secret")
    static let retailer = RetailerCredentials(id: UUID(), name: "Matey's", uuid: UUID(), apiKey: "lk_secret")

    func home() throws -> ClientHome {
        let directory = try temporaryDirectory()
        return ClientHome(configDirectory: directory, dataDirectory: directory)
    }

    @Test func anOriginIsSchemeHostAndPort() throws {
        func origin(_ text: String) -> ServerOrigin? { ServerOrigin(URL(string: text)!) }
        #expect(origin("https://Shop.Example.com")?.description == "https://shop.example.com:443")
        #expect(origin("https://shop.example.com:443/api") == origin("https://shop.example.com"))
        #expect(origin("http://shop.example.com") != origin("https://shop.example.com"))
        #expect(origin("http://127.0.0.1:8080") != origin("http://localhost:8080"))
        #expect(origin("ftp://shop.example.com") == nil)
    }

    @Test func onlyThisMachineIsLoopback() throws {
        for text in ["http://127.0.0.1:8080", "http://127.200.3.4", "http://localhost:1", "http://LOCALHOST", "http://[::1]:8080"] {
            #expect(ServerOrigin(URL(string: text)!)?.isLoopback == true, "\(text)")
        }
        for text in [
            "http://10.0.0.1", "http://128.0.0.1", "http://127.1", "http://loyalty.shop-example.com", "http://localhost.evil.com",
            "http://[::ffff:127.0.0.1]", "http://[::2]", "http://0.0.0.0",
        ] {
            #expect(ServerOrigin(URL(string: text)!)?.isLoopback == false, "\(text)")
        }
    }

    @Test func plainHTTPToAnotherMachineNeedsTheUsersSay() throws {
        #expect(throws: ClientError.plainHTTP(server: "http://loyalty.shop-example.com")) {
            try ClientConfig.validatedServer("http://loyalty.shop-example.com")
        }
        #expect(try ClientConfig.validatedServer("http://loyalty.shop-example.com", plainHTTPAllowed: true).host == "loyalty.shop-example.com")
        #expect(try ClientConfig.validatedServer("https://loyalty.shop-example.com").host == "loyalty.shop-example.com")
        #expect(try ClientConfig.validatedServer("http://[::1]:8080").port == 8080)
        let config = ClientConfig(server: "http://loyalty.shop-example.com")
        #expect(throws: ClientError.self) { try config.serverURL(flag: nil, environment: [:]) }
    }

    @Test func aDeviceTokenGoesOnlyToItsIssuer() throws {
        let home = try home()
        try home.saveDevice(Issued(Self.device, issuer: ServerOrigin(Self.here)))
        #expect(try home.deviceCredential(sendingTo: URL(string: "http://127.0.0.1:8080/")!).0 == Self.device)
        #expect(throws: ClientError.issuedElsewhere(.deviceToken, issuer: ServerOrigin(Self.here)!, server: ServerOrigin(Self.other)!)) {
            try home.deviceCredential(sendingTo: Self.other)
        }
    }

    /// A config's key goes only to its issuer; LOYALTY_RETAILER_KEY, given with the command as its server is, goes
    /// where the command says; `retailer key show` (no server) reads either.
    @Test func aRetailerKeyGoesOnlyToItsIssuer() throws {
        let config = ClientConfig(server: Self.here.absoluteString, retailer: Issued(Self.retailer, issuer: ServerOrigin(Self.here)))
        #expect(throws: ClientError.self) { try config.retailerCredential(environment: [:], sendingTo: Self.other) }
        guard case .retailer("lk_secret") = try config.retailerCredential(environment: [:], sendingTo: Self.here) else {
            Issue.record("the config's key was not sent to its issuer")
            return
        }
        guard case .retailer("lk_given") = try config.retailerCredential(environment: ["LOYALTY_RETAILER_KEY": "lk_given"], sendingTo: Self.other)
        else {
            Issue.record("LOYALTY_RETAILER_KEY was not sent where the command said")
            return
        }
    }

    /// Files from before issuers were kept: their credentials came from the config's server, and stay bound to it
    /// when a later write changes that server (no lockout, no silent move).
    @Test func credentialsWithoutAnIssuerAreTheConfigsServersAndStaySo() throws {
        let home = try home()
        try #"{"server": "http://127.0.0.1:8080", "retailer": {"id": "\#(Self.retailer.id)", "name": "Matey's", "uuid": "\#(Self.retailer.uuid)", "api_key": "lk_secret"}}"#
            .write(to: home.configFile, atomically: true, encoding: .utf8)
        try #"{"account_id": "\#(Self.device.accountID)", "device_id": "\#(Self.device.deviceID)", "device_token": "ld_secret"}"#
            .write(to: home.deviceFile, atomically: true, encoding: .utf8)
        #expect(try home.deviceCredential(sendingTo: Self.here).0 == Self.device)
        _ = try home.loadConfig().retailerCredential(environment: [:], sendingTo: Self.here)

        var config = try home.loadConfig()
        config.server = Self.other.absoluteString
        try home.saveConfig(config)
        #expect(try home.loadDevice()?.issuer == ServerOrigin(Self.here))
        #expect(try home.loadConfig().retailer?.issuer == ServerOrigin(Self.here))
        #expect(throws: ClientError.self) { try home.deviceCredential(sendingTo: Self.other) }
    }

    @Test func theConfigsServerMovesCredentialsOnlyWhenAsked() throws {
        let home = try home()
        try home.saveDevice(Issued(Self.device, issuer: ServerOrigin(Self.here)))
        try home.saveConfig(ClientConfig(server: Self.here.absoluteString, retailer: Issued(Self.retailer, issuer: ServerOrigin(Self.here))))
        #expect(throws: ClientError.issuedElsewhere(.deviceToken, issuer: ServerOrigin(Self.here)!, server: ServerOrigin(Self.other)!)) {
            try home.setServer(Self.other, movingCredentials: false)
        }
        #expect(try home.loadConfig().server == Self.here.absoluteString, "a refused change changes nothing")
        #expect(try home.setServer(URL(string: "http://127.0.0.1:8080/")!, movingCredentials: false) == [])

        #expect(try home.setServer(Self.other, movingCredentials: true) == [.deviceToken, .retailerKey])
        #expect(try home.deviceCredential(sendingTo: Self.other).0 == Self.device)
        _ = try home.loadConfig().retailerCredential(environment: [:], sendingTo: Self.other)
        #expect(throws: ClientError.self) { try home.deviceCredential(sendingTo: Self.here) }
    }
}
