import Foundation
import LoyaltyTesting
import Testing

/// The device token, the retailer's key and unspent till codes are the owner's alone: every state file is 0600
/// and the state folder 0700, a folder made beforehand with the usual 0755 and a cache left 0644 included, which
/// the next command narrows and names once.
@Suite struct StatePermissionTests {
    static func mode(_ url: URL) -> mode_t? {
        var status = stat()
        return lstat(url.path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }

    @Test func tokensAndCodesAreTheOwnersAlone() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Locked drawer", uuid: uuid)
        try store.setOffer(1, 1, "A locked-up coffee", [])
        let walk = try server.walk(["\(uuid):1:1@0=1,20=1"])
        let shopper = server.device()
        // As `mkdir` makes it, before the first command.
        try FileManager.default.createDirectory(
            at: shopper.home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])

        let created = try shopper.ok(["account", "create"])
        #expect(created.stderr.contains("note: \(shopper.home.path) was open to other users (mode 755): now 700"),
            "\(created.stderr)")
        try shopper.ok(["sync"])
        #expect(try shopper.scan(walk).map(\.title) == ["A locked-up coffee"])
        try shopper.ok(["sync"])
        try shopper.ok(["redeem", "\(uuid):1:1"])
        let history = try shopper.ok(["history"])
        #expect(!history.stderr.contains("note:"), "said once: \(history.stderr)")

        let cache = shopper.home.appendingPathComponent("cache.sqlite")
        #expect(Self.mode(shopper.home) == 0o700)
        for file in ["device.json", "cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"] {
            let url = shopper.home.appendingPathComponent(file)
            if file.hasPrefix("cache.sqlite-"), Self.mode(url) == nil { continue }  // checkpointed away
            #expect(Self.mode(url) == 0o600, "\(file): \(Self.mode(url).map { String($0, radix: 8) } ?? "missing")")
        }

        // A cache an earlier version made 0644 is narrowed by the next command, which says so.
        chmod(cache.path, 0o644)
        let offers = try shopper.ok(["offers"])
        #expect(offers.stderr.contains("note: \(cache.path) was open to other users (mode 644): now 600"), "\(offers.stderr)")
        #expect(Self.mode(cache) == 0o600)
    }
}
