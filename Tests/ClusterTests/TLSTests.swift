import Foundation
import LoyaltyTesting
import Postgres
import Testing

/// https as deploy/ ships it (issue 41, item 6): HAProxy terminating TLS with a private CA's certificate in front of
/// a real loyalty-server, and the real `loyalty` trusting that CA through --ca-file, LOYALTY_CA_FILE or the config.
@Suite(.serialized) struct TLSTests {
    @Test func theClientSpeaksHTTPSThroughHAProxyWithAPrivateCA() throws {
        let databaseURL = try EmbeddedPostgres.shared().createDatabase("tls_\(UUID().uuidString.prefix(8).lowercased())")
        let server = try LoyaltyServerProcess(
            databaseURL: databaseURL, environment: ["LOYALTY_PROXY_PROTOCOL": "1", "LOYALTY_TRUSTED_PROXIES": "127.0.0.1"])
        defer { server.stop() }
        let balancer = try HAProxy(servers: [server.port, server.port])
        defer { balancer.stop() }
        let url = "https://localhost:\(balancer.port)"
        let home = server.directory.appendingPathComponent("shopper-\(UUID().uuidString)")
        func loyalty(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
            try Binary("loyalty").run(
                arguments, environment: ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": ""].merging(environment) { $1 })
        }

        // Without the CA: refused at the handshake, saying why and what to do; no account is made.
        let deadline = Date().addingTimeInterval(30)
        var untrusted = try loyalty(["account", "create", "--server", url])
        while untrusted.status == 75, Date() < deadline {  // HAProxy still starting
            Thread.sleep(forTimeInterval: 0.2)
            untrusted = try loyalty(["account", "create", "--server", url])
        }
        #expect(untrusted.status == 69, "\(untrusted.stderr)\n\(balancer.log)")
        #expect(untrusted.stderr.contains("the certificate of \(url)") && untrusted.stderr.contains("is not trusted"), "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("--ca-file"), "\(untrusted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("device.json").path))

        // With it: the account is made over https (once both balancer checks let the instance in), and syncs.
        var created = try loyalty(["account", "create", "--server", url, "--ca-file", balancer.caFile.path])
        while created.status != 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            created = try loyalty(["account", "create", "--server", url, "--ca-file", balancer.caFile.path])
        }
        #expect(created.status == 0, "\(created.stderr)\n\(balancer.log)")
        let synced = try loyalty(["sync"], ["LOYALTY_CA_FILE": balancer.caFile.path])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try loyalty(["sync"]).status == 69, "the CA is given each time, or kept in the config")
        try #require(try loyalty(["config", "set", "ca_file", balancer.caFile.path]).status == 0)
        #expect(try loyalty(["sync"]).status == 0)
        #expect(try loyalty(["devices"]).status == 0)

        // The retailer's side, with the operator's token, over the same https.
        let shop = server.directory.appendingPathComponent("retailer-\(UUID().uuidString)")
        let retailer = ["LOYALTY_HOME": shop.path, "LOYALTY_CA_FILE": balancer.caFile.path]
        let registered = try loyalty(
            ["retailer", "register", "--name", "Over TLS", "--server", url],
            retailer.merging(["LOYALTY_ADMIN_TOKEN": server.adminToken]) { $1 })
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(try loyalty(["retailer", "offers"], retailer).status == 0)

        // Plain http to a name that is not this machine's is refused before any connection is tried.
        let plain = try loyalty(["sync", "--server", "http://loyalty.shop.example"])
        #expect(plain.status == 64 && plain.stderr.contains("is plain http to another machine"), "\(plain.stderr)")
    }
}
