import Foundation
import LoyaltyAPI
import Testing

@testable import LoyaltyClient

/// A cache file in a fresh temporary directory.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-client-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

private let epoch = Date(timeIntervalSince1970: 1_800_000_000)
private let matey = CatalogRetailer(
    id: UUID(), name: "Matey's", uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!)

private func offer(_ major: UInt16, _ minor: UInt16, _ title: String, retailer: CatalogRetailer = matey) -> Offer {
    Offer(
        id: UUID(), retailerID: retailer.id, major: major, minor: minor, title: title, category: "food",
        endsAt: epoch.addingTimeInterval(86_400), reshowAfterSeconds: 60, updatedAt: epoch)
}

@Suite struct OfferCacheTests {
    @Test func fullPageThenDeltaThenTombstone() throws {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        let sushi = offer(1, 1, "sushi")
        let pizza = offer(1, 2, "pizza")
        try cache.apply(
            CatalogPage(
                cursor: "c1", full: true, serverTime: epoch, retailers: [matey], offers: [sushi, pizza], removed: []),
            etag: "\"e1\"", serverTimeOffset: 12.5)
        #expect(try cache.catalogCursor == "c1")
        #expect(try cache.catalogETag == "\"e1\"")
        #expect(try cache.serverTimeOffset == 12.5)
        #expect(try cache.offers().map(\.offer) == [sushi, pizza])
        #expect(try cache.offer(uuid: matey.uuid, major: 1, minor: 2)?.offer == pizza)
        #expect(try cache.offer(id: sushi.id)?.retailer == matey)

        var renamed = sushi
        renamed.title = "40% off sushi"
        try cache.apply(
            CatalogPage(
                cursor: "c2", full: false, serverTime: epoch, retailers: [], offers: [renamed],
                removed: [CatalogTombstone(id: pizza.id, retailerID: matey.id)]),
            etag: nil, serverTimeOffset: 0)
        #expect(try cache.offers().map(\.offer) == [renamed])
        #expect(try cache.offer(uuid: matey.uuid, major: 1, minor: 2) == nil)
        #expect(try cache.catalogCursor == "c2")

        // A full page replaces everything, including retailers that left.
        let other = CatalogRetailer(id: UUID(), name: "Other", uuid: UUID())
        let shoes = offer(3, 3, "shoes", retailer: other)
        try cache.apply(
            CatalogPage(cursor: "c3", full: true, serverTime: epoch, retailers: [other], offers: [shoes], removed: []),
            etag: nil, serverTimeOffset: 0)
        #expect(try cache.retailers() == [other])
        #expect(try cache.offers(retailerName: "other").map(\.offer) == [shoes])
        #expect(try cache.offers(retailerName: "Matey's").isEmpty)
    }

    @Test func offerListingLinesAreJSONInBeaconOrder() throws {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        var quoted = offer(1, 2, "say \"hi\"\n\\ café")
        quoted.startsAt = Date(timeIntervalSince1970: 1_800_000_000.25)
        quoted.description = nil
        // Rounded to the millisecond as the API rounds it: the next second, not "00.999".
        quoted.endsAt = Date(timeIntervalSince1970: 1_800_000_000.9996)
        let plain = offer(1, 1, "plain")
        try cache.apply(
            CatalogPage(
                cursor: "c", full: true, serverTime: epoch, retailers: [matey], offers: [quoted, plain], removed: []),
            etag: nil, serverTimeOffset: 0)
        try cache.show(plain.id, at: epoch)
        var lines: [[String: Any]] = []
        try cache.forEachOfferJSON { line in
            lines.append(try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any])
        }
        #expect(lines.map { $0["title"] as? String } == ["plain", "say \"hi\"\n\\ café"])
        #expect(lines[0]["id"] as? String == plain.id.uuidString.lowercased())
        #expect(lines[0]["seen"] as? Bool == true)
        #expect(lines[1]["seen"] as? Bool == false)
        #expect(lines[0]["ends_at"] as? String == "2027-01-16T08:00:00Z")
        #expect(lines[1]["starts_at"] as? String == "2027-01-15T08:00:00.250Z")
        #expect(lines[1]["ends_at"] as? String == "2027-01-15T08:00:01Z")
        #expect(lines[1]["description"] is NSNull)
        #expect(lines[1]["retailer"] as? String == "Matey's")
        #expect(lines[1]["major"] as? Int == 1)
        var filtered = 0
        try cache.forEachOfferJSON(retailerName: "nobody") { _ in filtered += 1 }
        #expect(filtered == 0)
        // Chunks hold whole lines: tiny chunks are one line each, large ones all lines at once.
        var one: [String] = []
        try cache.forEachOfferJSON { one.append($0 + "\n") }
        var tiny: [String] = []
        try cache.forEachOfferJSONChunk(chunkBytes: 1) { tiny.append($0) }
        #expect(tiny == one)
        var whole: [String] = []
        try cache.forEachOfferJSONChunk { whole.append($0) }
        #expect(whole == [one.joined()])
        try cache.forEachOfferJSONChunk(retailerName: "nobody") { _ in filtered += 1 }
        #expect(filtered == 0)
    }

    @Test func shownOffersGoToSeenAndOutboxUntilAcknowledged() throws {
        let file = try temporaryDirectory().appendingPathComponent("cache.sqlite")
        let id1 = UUID()
        let id2 = UUID()
        do {
            let cache = try OfferCache(file: file)
            try cache.show(id1, at: epoch)
            try cache.show(id2, at: epoch.addingTimeInterval(5))
        }
        // Reopened, as after the process died: nothing lost.
        let cache = try OfferCache(file: file)
        #expect(try cache.seen() == [id1: epoch, id2: epoch.addingTimeInterval(5)])
        let (items, through) = try cache.outbox(limit: 1)
        #expect(items == [SeenItem(offerID: id1, seenAt: epoch)])
        try cache.acknowledgeOutbox(through: through)
        #expect(try cache.outbox(limit: 10).items == [SeenItem(offerID: id2, seenAt: epoch.addingTimeInterval(5))])

        // Another device's older sighting never moves the latest time back; a newer one does.
        try cache.apply(
            SeenPage(cursor: "s1", items: [SeenItem(offerID: id1, seenAt: epoch.addingTimeInterval(-100))]))
        #expect(try cache.seen()[id1] == epoch)
        try cache.apply(SeenPage(cursor: "s2", items: [SeenItem(offerID: id1, seenAt: epoch.addingTimeInterval(100))]))
        #expect(try cache.seen()[id1] == epoch.addingTimeInterval(100))
        #expect(try cache.seenCursor == "s2")
    }

    @Test func aPendingRedemptionKeepsItsKey() throws {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        let offerID = UUID()
        var minted = 0
        let newKey = {
            minted += 1
            return "key-\(minted)"
        }
        let first = try cache.idempotencyKey(forRedeeming: offerID, now: epoch, newKey: newKey)
        let retry = try cache.idempotencyKey(forRedeeming: offerID, now: epoch, newKey: newKey)
        #expect(first == "key-1")
        #expect(retry == first)
        try cache.completeRedemption(
            key: first, Redemption(id: UUID(), offerID: offerID, code: "ABC123", redeemedAt: epoch))
        #expect(try cache.redemptions().first?.redemption?.code == "ABC123")
        // Once answered, a new redemption of the same offer is a new request.
        let next = try cache.idempotencyKey(forRedeeming: offerID, now: epoch, newKey: newKey)
        #expect(next == "key-2")
        try cache.abandonRedemption(key: next)
        #expect(try cache.redemptions().count == 1)
    }

    @Test func aDamagedFileIsReportedAndCanBeDiscarded() throws {
        let file = try temporaryDirectory().appendingPathComponent("cache.sqlite")
        try Data(repeating: 0x5A, count: 8192).write(to: file)
        #expect {
            _ = try OfferCache(file: file)
        } throws: { error in
            guard case .corruptCache(let message) = error as? ClientError else { return false }
            return message.contains("loyalty sync --full")
        }
        try OfferCache.discard(file: file)
        let cache = try OfferCache(file: file)
        #expect(try cache.offers().isEmpty)
        #expect(FileManager.default.fileExists(atPath: file.path + ".corrupt"))
    }

    @Test func forgettingCursorsKeepsTheOutbox() throws {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        try cache.apply(
            CatalogPage(cursor: "c1", full: true, serverTime: epoch, retailers: [], offers: [], removed: []),
            etag: "e", serverTimeOffset: 0)
        try cache.apply(SeenPage(cursor: "s1", items: []))
        try cache.show(UUID(), at: epoch)
        try cache.forgetCursors()
        #expect(try cache.catalogCursor == nil)
        #expect(try cache.catalogETag == nil)
        #expect(try cache.seenCursor == nil)
        #expect(try cache.outboxCount == 1)
    }
}

@Suite struct ClientHomeTests {
    @Test func loyaltyHomeHoldsEverything() throws {
        let home = try ClientHome(environment: ["LOYALTY_HOME": "/tmp/x", "HOME": "/home/u"])
        #expect(home.cacheFile.path == "/tmp/x/cache.sqlite")
        #expect(home.configFile.path == "/tmp/x/config.json")
    }

    @Test func xdgDefaults() throws {
        let home = try ClientHome(environment: ["HOME": "/home/u"])
        #expect(home.configFile.path == "/home/u/.config/loyalty/config.json")
        #expect(home.cacheFile.path == "/home/u/.local/share/loyalty/cache.sqlite")
        let xdg = try ClientHome(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d"])
        #expect(xdg.deviceFile.path == "/c/loyalty/device.json")
        #expect(xdg.cacheFile.path == "/d/loyalty/cache.sqlite")
        #expect(throws: ClientError.self) { try ClientHome(environment: [:]) }
    }

    @Test func secretsAreWrittenOwnerOnly() throws {
        let directory = try temporaryDirectory()
        let home = ClientHome(configDirectory: directory.appendingPathComponent("c"), dataDirectory: directory)
        let device = DeviceCredentials(accountID: UUID(), deviceID: UUID(), deviceToken: "secret")
        try home.saveDevice(device)
        #expect(try home.loadDevice() == device)
        let attributes = try FileManager.default.attributesOfItem(atPath: home.deviceFile.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.configDirectory.path)
        #expect(leftovers == ["device.json"])
    }

    @Test func serverURLPrecedence() throws {
        let config = ClientConfig(server: "http://config:1")
        #expect(
            try config.serverURL(flag: "http://flag:2", environment: ["LOYALTY_SERVER": "http://env:3"]).host == "flag")
        #expect(try config.serverURL(flag: nil, environment: ["LOYALTY_SERVER": "http://env:3"]).host == "env")
        #expect(try config.serverURL(flag: nil, environment: [:]).host == "config")
        #expect(try ClientConfig().serverURL(flag: nil, environment: [:]).absoluteString == "http://127.0.0.1:8080")
        #expect(throws: ClientError.self) { try config.serverURL(flag: "ftp://x", environment: [:]) }
    }
}
