import Foundation
import LoyaltyTesting
import Testing

/// The working set through the real binaries (`loyalty sync`, `follow`, a scan that hears a retailer it does not
/// carry) against the shared `loyalty-server`, whose directory has two buckets and whose other tests' retailers are
/// elsewhere.
@Suite struct WorkingSetStoryTests {
    /// A retailer with a store at `latitude`, `longitude` and one offer at 1:1, named uniquely.
    private func shop(_ server: StoryServer, _ name: String, latitude: Double, longitude: Double) throws
        -> (name: String, uuid: String, title: String)
    {
        let name = "\(name) \(UUID().uuidString.prefix(8))"
        let uuid = UUID().uuidString
        let retailer = try server.retailer(name, uuid: uuid)
        try retailer.setOffer(1, 1, "Sushi at \(name)", [])
        try retailer.ok([
            "retailer", "store", "set", "main", "--name", "\(name) main", "--lat", "\(latitude)", "--lon", "\(longitude)",
            "--radius-m", "100",
        ])
        return (name, uuid, "Sushi at \(name)")
    }

    /// A place no other test's store is near.
    private func somewhere() -> (latitude: Double, longitude: Double) {
        (Double.random(in: -60...60), Double.random(in: -170...170))
    }

    @Test func twoDevicesWithDifferentWorkingSetsShareOneSeenHistory() throws {
        let server = try StoryServer.shared.get()
        let place = somewhere()
        let corner = try shop(server, "Corner", latitude: place.latitude, longitude: place.longitude)
        let followed = try shop(server, "Followed", latitude: place.latitude + 1, longitude: place.longitude)
        let phone = try server.newAccount()
        try phone.ok(["sync", "--near", "\(place.latitude),\(place.longitude)", "--radius-km", "2"])
        #expect(try phone.cachedTitles() == [corner.title])

        let tablet = try phone.linkedDevice()
        try tablet.ok(["sync"])
        #expect(try tablet.cachedTitles().isEmpty)
        let follow = try tablet.ok(["follow", followed.name.lowercased(), "--json"]).jsonLines
        #expect(follow.first?["retailer"] as? String == followed.name)
        let synced = try tablet.syncReport()
        #expect(synced["carried_retailers"] as? Int == 1)
        #expect(try tablet.cachedTitles() == [followed.title])
        #expect(try tablet.ok(["following", "--json"]).jsonLines.map { $0["retailer"] as? String } == [followed.name])

        // The phone shows the corner shop's offer. The tablet does not carry the corner shop: its scan hears the
        // shop's UUID, fetches it at once (online), and does not show what the phone saw.
        let walk = try server.walk(["\(corner.uuid):1:1@0=15,8=1,16=1,24=15,40=15"])
        #expect(try phone.scan(walk).map(\.title) == [corner.title])
        try phone.ok(["sync"])
        try tablet.ok(["sync"])
        #expect(try tablet.scan(walk).isEmpty)
        #expect(Set(try tablet.cachedTitles()) == [followed.title, corner.title])
    }

    @Test func aRetailerHeardOfflineIsFetchedAndShownAfterReconnecting() throws {
        let server = try StoryServer.shared.get()
        let place = somewhere()
        let shop = try shop(server, "Heard", latitude: place.latitude, longitude: place.longitude)
        let device = try server.newAccount()
        try device.ok(["sync"])
        let walk = try server.walk(["\(shop.uuid):1:1@0=15,8=1,16=1,24=15,40=15"])

        // Offline the scan has nothing to show for a retailer it does not carry, and queues what it heard.
        let offline = try device.ok(["scan", "--replay", walk.path, "--json", "--offline"]).jsonLines
        #expect(!offline.contains { $0["event"] as? String == "offer" })
        #expect(try device.cachedTitles().isEmpty)

        // Back online, the next sync fetches it, and the next pass shows its offer.
        try device.ok(["sync"])
        #expect(try device.cachedTitles() == [shop.title])
        #expect(try device.scan(walk, ["--offline"]).map(\.title) == [shop.title])
    }

    @Test func followingANameTheDirectoryLacksSaysWhatToDo() throws {
        let server = try StoryServer.shared.get()
        let device = try server.newAccount()
        let name = "Nobody \(UUID().uuidString)"
        for command in ["follow", "unfollow"] {
            let result = try device.run([command, name])
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("no retailer named '\(name)'"), "\(result.stderr)")
        }
        let both = try device.run(["sync", "--working-set", "--all"])
        #expect(both.status == 64 && both.stderr.contains("choose one"), "\(both.stderr)")
    }
}
