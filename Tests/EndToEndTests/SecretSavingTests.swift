import Foundation
import LoyaltyTesting
import Testing

/// With a state folder that cannot be written, nothing the server shows once is lost:
/// `register`, `rotate-key`, `account create` and `account link CODE` stop before asking the server, so no
/// retailer, key, account or spent code is left with nobody holding its secret.
@Suite(.serialized) struct SecretSavingTests {
    private func expectRefusedBeforeAsking(_ result: Binary.Result, _ command: String) {
        #expect(result.status == 74, "\(command): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains("cannot write in") && result.stderr.contains("nothing was asked of the server"),
            "\(command): \(result.stderr)")
    }

    @Test func registeringIntoAReadOnlyFolderTakesNoUUID() throws {
        let server = try StoryServer.shared.get()
        let folder = try ReadOnlyFolder()
        let uuid = UUID().uuidString
        let locked = StoryDevice(server: server, home: folder.url)
        let refused = try locked.run(
            ["retailer", "register", "--name", "Locked out", "--uuid", uuid], ["LOYALTY_ADMIN_TOKEN": server.operatorToken])
        expectRefusedBeforeAsking(refused, "register")
        // The UUID is still free: the server never registered the retailer whose key had nowhere to go.
        _ = try server.retailer("Registered", uuid: uuid)
    }

    @Test func rotatingAKeyFromAReadOnlyFolderKeepsTheKey() throws {
        let server = try StoryServer.shared.get()
        let retailer = try server.retailer("Rotating read-only", uuid: UUID().uuidString)
        let config = try Data(contentsOf: retailer.home.appendingPathComponent("config.json"))
        let folder = try ReadOnlyFolder(files: ["config.json": config])
        let locked = StoryDevice(server: server, home: folder.url)
        expectRefusedBeforeAsking(try locked.run(["retailer", "rotate-key"]), "rotate-key")
        try locked.ok(["retailer", "offers"])
        try retailer.ok(["retailer", "rotate-key"])
        try retailer.ok(["retailer", "offers"])
    }

    @Test func creatingAnAccountInAReadOnlyFolderAsksNothing() throws {
        let server = try StoryServer.shared.get()
        let folder = try ReadOnlyFolder()
        expectRefusedBeforeAsking(
            try StoryDevice(server: server, home: folder.url).run(["account", "create"]), "account create")
    }

    @Test func linkingIntoAReadOnlyFolderLeavesTheCodeUnspent() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        let code = try #require(try phone.ok(["account", "link", "--json"]).jsonLines.first?["code"] as? String)
        let folder = try ReadOnlyFolder()
        expectRefusedBeforeAsking(
            try StoryDevice(server: server, home: folder.url).run(["account", "link", code]), "account link")
        try server.device().ok(["account", "link", code])
        let devices = try phone.ok(["devices", "--json"]).jsonLines
        #expect(devices.count == 2, "no ghost device: \(devices)")
    }
}
