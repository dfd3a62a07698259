import Foundation
import LoyaltyTesting
import Testing

/// Through the real binaries: `loyalty retailer beacon secure` against `loyalty-server` with its generated beacon key.
@Suite struct SecureBeaconCommandTests {
    @Test func theProvisioningDocumentGoesToAFileOfMode0600AndTheKeyNowhereElse() throws {
        let server = try StoryServer.shared.get()
        let serverKey = server.work.appendingPathComponent("server/beacon-key").path
        #expect(try FileManager.default.attributesOfItem(atPath: serverKey)[.posixPermissions] as? Int == 0o600)
        let uuid = UUID().uuidString
        let retailer = try server.retailer("Secure shop \(uuid.prefix(4))", uuid: uuid)
        let file = retailer.home.appendingPathComponent("beacon-1-1.json")
        let result = try retailer.ok([
            "retailer", "beacon", "secure", "1", "1", "--exponent", "8", "--form", "ibeacon", "--output", file.path,
            "--json",
        ])
        let line = try #require(result.jsonLines.first)
        #expect(line["event"] as? String == "beacon_secured" && line["file"] as? String == file.path)
        #expect(line["identity_key"] == nil && line["exponent"] as? Int == 8 && line["form"] as? String == "ibeacon")
        #expect((line["uuid"] as? String)?.uppercased() == uuid.uppercased() && line["counter"] as? Int == 65_280)
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let key = try #require(document["identity_key"] as? String)
        #expect(key.count == 32 && document["exponent"] as? Int == 8 && document["counter_at"] is String)
        #expect(!result.stdout.contains(key) && !result.stderr.contains(key))

        // Without --output the key is shown on standard output, this once: asking again made a new one.
        let shown = try retailer.ok(["retailer", "beacon", "secure", "1", "1"]).stdout
        #expect(shown.contains("is secure (eddystone") && shown.contains("shown only now") && !shown.contains(key))
        let refused = try retailer.run(["retailer", "beacon", "secure", "1", "1", "--exponent", "16"])
        #expect(refused.status == 64 && refused.stderr.contains("--exponent"), "\(refused.stderr)")
    }
}
