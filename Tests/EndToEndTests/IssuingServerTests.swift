import Foundation
import LoyaltyTesting
import Testing

/// Credentials go back only to the server that issued them, and plain http only to this machine (issue 41, items
/// 5 and 6): the real `loyalty` against the real server, and a second server that records what it was sent.
@Suite struct IssuingServerTests {
    /// Another server, on loopback: it answers anything, and keeps what it got.
    static func other() throws -> CannedHTTPServer {
        try CannedHTTPServer([CannedHTTPServer.Answer("", status: 200, body: "{}")])
    }

    static func sentAToken(_ server: CannedHTTPServer) -> Bool {
        server.received.contains { $0.lowercased().contains("\r\nauthorization:") }
    }

    /// Item 5: with the account and the retailer made on one server, pointing a command at another sends neither
    /// the device token nor the API key there; the message names both servers and how to move deliberately.
    @Test func aCredentialIsNotSentToAnotherServer() throws {
        let server = try StoryServer.shared.get()
        let other = try Self.other()
        let issuer = server.url
        let shopper = try server.newAccount()
        for (arguments, environment) in [
            (["sync"], ["LOYALTY_SERVER": other.url]), (["sync", "--server", other.url], [:]),
            (["devices"], ["LOYALTY_SERVER": other.url]), (["account", "link"], ["LOYALTY_SERVER": other.url]),
        ] {
            let refused = try shopper.run(arguments, environment)
            #expect(refused.status == 77, "\(arguments): \(refused.stderr)")
            #expect(
                refused.stderr.contains("this device's token was issued by \(issuer), not \(other.url), so it was not sent"),
                "\(refused.stderr)")
            #expect(refused.stderr.contains("loyalty config set server \(other.url) --move-credentials"), "\(refused.stderr)")
        }

        let retailer = try server.retailer("Elsewhere \(UUID().uuidString.prefix(6))", uuid: UUID().uuidString)
        for arguments in [["retailer", "offers"], ["retailer", "rotate-key"], ["retailer", "stats"]] {
            let refused = try retailer.run(arguments, ["LOYALTY_SERVER": other.url])
            #expect(refused.status == 77, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("the retailer API key in the config was issued by \(issuer)"), "\(refused.stderr)")
        }
        #expect(other.received.isEmpty, "\(other.received)")
        // Printing the key sends nothing: it works whatever the server.
        #expect(try retailer.run(["retailer", "key", "show"], ["LOYALTY_SERVER": other.url]).status == 0)

        // The config is not pointed elsewhere either, unless the credentials move with it, deliberately.
        let unset = ["LOYALTY_SERVER": ""]
        let set = try shopper.run(["config", "set", "server", other.url], unset)
        #expect(set.status == 77 && set.stderr.contains("--move-credentials"), "\(set.stderr)")
        let moved = try shopper.run(["config", "set", "server", other.url, "--move-credentials"], unset)
        #expect(moved.status == 0 && moved.stderr.contains("this device's token will be sent to \(other.url)"), "\(moved.stderr)")
        _ = try shopper.run(["sync"], unset)
        #expect(Self.sentAToken(other), "after the move the token goes to the new address: \(other.received)")
    }

    /// Files written before issuers were kept: their server is the config's, with no lockout, and they stay bound to
    /// it.
    @Test func credentialsFromBeforeIssuersWereKeptStayWithTheConfigsServer() throws {
        let server = try StoryServer.shared.get()
        let other = try Self.other()
        let shopper = try server.newAccount()
        let file = shopper.home.appendingPathComponent("device.json")
        var device = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        #expect(device["issued_by"] != nil, "\(device)")
        device["issued_by"] = nil
        try JSONSerialization.data(withJSONObject: device).write(to: file)

        let unset = ["LOYALTY_SERVER": ""]
        #expect(try shopper.run(["sync"], unset).status == 0)
        #expect(try shopper.run(["sync"], ["LOYALTY_SERVER": other.url]).status == 77)
        #expect(try shopper.run(["config", "set", "server", other.url], unset).status == 77)
        #expect(!Self.sentAToken(other), "\(other.received)")
    }

    /// Item 6: plain http to a host that is not this machine is refused before anything is sent (the name does not
    /// even have to resolve: .example never does), by shoppers' and retailers' commands alike, and the config does
    /// not keep it; with the user's say-so it is tried, with a warning each time.
    @Test func plainHTTPToAnotherMachineIsRefusedUnlessAskedFor() throws {
        let server = try StoryServer.shared.get()
        let remote = "http://loyalty.shop.example"
        let fresh = server.device()
        let operatorToken = ["LOYALTY_ADMIN_TOKEN": server.operatorToken]
        for (arguments, environment) in [
            (["account", "create"], [String: String]()), (["sync"], [:]), (["retailer", "offers"], [:]),
            (["retailer", "register", "--name", "Wi-Fi"], operatorToken), (["till", "check", "K7M2-2345", "--till-key", "lt_x"], [:]),
        ] {
            let refused = try fresh.run(arguments, environment.merging(["LOYALTY_SERVER": remote]) { $1 })
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("'\(remote)' is plain http to another machine"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--insecure-http"), "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: fresh.home.appendingPathComponent("device.json").path))
        let set = try fresh.run(["config", "set", "server", remote])
        #expect(set.status == 64, "\(set.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh.home.appendingPathComponent("config.json").path))

        for optIn in [["--insecure-http"], []] {
            let tried = try fresh.run(
                ["account", "create", "--server", remote, "--connect-timeout", "2"] + optIn,
                optIn.isEmpty ? ["LOYALTY_INSECURE_HTTP": "1"] : [:])
            #expect(tried.status == 75, "the name does not resolve here: \(tried.stderr)")
            #expect(
                tried.stderr.contains("warning: plain http to http://loyalty.shop.example:80"), "\(tried.stderr)")
        }
        // This machine needs no say-so (as `make demo` runs).
        #expect(try fresh.run(["config", "set", "server", "http://localhost:8080"]).status == 0)
    }
}
