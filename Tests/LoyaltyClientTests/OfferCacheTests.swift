import Foundation
import JSONCoding
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

/// `offers --json`'s lines, without their newlines.
private func listing(_ cache: OfferCache, retailerName: String? = nil) throws -> [String] {
    var bytes: [UInt8] = []
    try cache.forEachOfferJSONChunk(retailerName: retailerName) { bytes += $0 }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        .dropLast().map(String.init)
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
        let text = try listing(cache)
        let lines = text.map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
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
        #expect(try listing(cache, retailerName: "nobody").isEmpty)
        // Chunks hold whole lines: tiny chunks are one line each, large ones all lines at once.
        var tiny: [String] = []
        try cache.forEachOfferJSONChunk(chunkBytes: 1) { tiny.append(String(decoding: $0, as: UTF8.self)) }
        #expect(tiny == text.map { $0 + "\n" })
        var whole: [String] = []
        try cache.forEachOfferJSONChunk { whole.append(String(decoding: $0, as: UTF8.self)) }
        #expect(whole == [tiny.joined()])
        var filtered = 0
        try cache.forEachOfferJSONChunk(retailerName: "nobody") { _ in filtered += 1 }
        #expect(filtered == 0)
    }

    /// `offers --json` byte for byte: every optional field set and unset, text that needs escaping, two
    /// retailers, seen offers first, between and last in a retailer's beacon order, and a seen offer the
    /// catalog no longer has. The expected lines are written field by field with the API's JSON writer.
    @Test func offerListingIsTheOffersAsTheAPIWritesThem() throws {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        let cafe = CatalogRetailer(
            id: UUID(uuidString: "00000000-0000-4000-8000-000000000001")!, name: "Café \"Ünï\" \\ 寿司",
            uuid: UUID(uuidString: "11111111-2222-4333-8444-555555555555")!)
        let mateys = CatalogRetailer(
            id: UUID(uuidString: "F0000000-0000-4000-8000-000000000002")!, name: matey.name, uuid: matey.uuid)
        var everything = offer(1, 2, "Everything: ☃ «über» 🍣 \"q\" \\", retailer: mateys)
        everything.description = "tab\there, new\nline, bell\u{7}, escape\u{1B}[31m, del\u{7F}, csi\u{9B}, nul\u{0}"
        everything.category = "clothing"
        everything.imageURL = "https://example.com/a.png?x=1&y=2"
        everything.startsAt = Date(timeIntervalSince1970: 1_767_258_000.25)
        everything.totalLimit = 100
        var nothing = offer(0, 0, "Only a title", retailer: mateys)
        nothing.category = nil
        nothing.endsAt = nil
        nothing.reshowAfterSeconds = nil
        let highest = offer(65_535, 65_535, "Highest beacon", retailer: mateys)
        let middle = offer(2, 1, "Middle", retailer: mateys)
        let cafeFirst = offer(0, 1, "寿司 50% 引き", retailer: cafe)
        let cafeLast = offer(9, 9, "Emoji 👩‍👩‍👧 and combining é", retailer: cafe)
        try cache.apply(
            CatalogPage(
                cursor: "c", full: true, serverTime: epoch, retailers: [mateys, cafe],
                offers: [highest, everything, cafeLast, nothing, middle, cafeFirst], removed: []),
            etag: nil, serverTimeOffset: 0)
        let seen: Set<UUID> = [nothing.id, middle.id, highest.id, cafeFirst.id]
        try cache.apply(
            SeenPage(cursor: "s", items: (seen + [UUID()]).map { SeenItem(offerID: $0, seenAt: epoch) }))

        func line(_ offer: Offer, _ retailer: CatalogRetailer) -> String {
            var line = JSONLineBuffer()
            func text(_ key: StaticString, _ value: String?) {
                line.raw(key)
                if let value { line.string(value) } else { line.raw("null") }
            }
            text("{\"id\":", offer.id.uuidString.lowercased())
            line.raw(",\"major\":")
            line.integer(Int(offer.major))
            line.raw(",\"minor\":")
            line.integer(Int(offer.minor))
            text(",\"title\":", offer.title)
            text(",\"description\":", offer.description)
            text(",\"category\":", offer.category)
            text(",\"starts_at\":", offer.startsAt.map(LoyaltyJSON.formatTimestamp))
            text(",\"ends_at\":", offer.endsAt.map(LoyaltyJSON.formatTimestamp))
            text(",\"retailer\":", retailer.name)
            text(",\"uuid\":", retailer.uuid.uuidString)
            line.raw(",\"seen\":")
            line.raw(seen.contains(offer.id) ? "true}" : "false}")
            return String(decoding: line.bytes, as: UTF8.self)
        }
        let cafeLines = [line(cafeFirst, cafe), line(cafeLast, cafe)]
        let mateysLines = [nothing, everything, middle, highest].map { line($0, mateys) }
        #expect(try listing(cache) == cafeLines + mateysLines)
        #expect(try listing(cache, retailerName: "MATEY'S") == mateysLines)
        #expect(try listing(cache, retailerName: cafe.name) == cafeLines)
        for chunkBytes in [1, 300, 1 << 16] {
            var chunks: [UInt8] = []
            try cache.forEachOfferJSONChunk(chunkBytes: chunkBytes) { chunks += $0 }
            #expect(String(decoding: chunks, as: UTF8.self) == (cafeLines + mateysLines).map { $0 + "\n" }.joined())
        }
    }

    /// Opening a cache at the current schema writes nothing, so a command that only reads it (`offers`,
    /// `history`) writes no log and waits for no fsync.
    @Test func openingAnUpToDateCacheWritesNothing() throws {
        let file = try temporaryDirectory().appendingPathComponent("cache.sqlite")
        do {
            let cache = try OfferCache(file: file)
            try cache.apply(
                CatalogPage(
                    cursor: "c", full: true, serverTime: epoch, retailers: [matey], offers: [offer(1, 1, "sushi")],
                    removed: []),
                etag: nil, serverTimeOffset: 0)
        }
        let cache = try OfferCache(file: file)
        #expect(try cache.offers().count == 1)
        let log = try FileManager.default.attributesOfItem(atPath: file.path + "-wal")
        #expect(log[.size] as? Int == 0)
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

    /// An offer with shows_per_day is claimed up to its cap on a UTC day, counting the shows the server reported;
    /// a smaller count from the server never lowers this device's, and the next day starts again.
    @Test func aDailyCapIsClaimedUpToItsCountWithTheSyncedShows() throws {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        let lunch = UUID()
        func claim(_ at: Date) throws -> Bool {
            let claimed = try cache.claimShown(lunch, shownAt: at, reportedAt: at, reshowAfter: nil, showsPerDay: 3)
            if claimed { try cache.shown(lunch) }
            return claimed
        }
        let day = Offer.showDay(epoch)
        #expect(try claim(epoch))
        // Another device showed it once more today: the sync says 2; then one more show here reaches the cap.
        try cache.apply(SeenPage(cursor: "s1", items: [], dayShows: [DayShows(offerID: lunch, day: day, shows: 2)]))
        #expect(try claim(epoch.addingTimeInterval(60)))
        #expect(try !claim(epoch.addingTimeInterval(120)))
        try cache.apply(SeenPage(cursor: "s2", items: [], dayShows: [DayShows(offerID: lunch, day: day, shows: 1)]))
        #expect(try cache.dayShows() == [DayShows(offerID: lunch, day: day, shows: 3)])
        // Without a cap the same offer shows once ever; the next UTC day (epoch is 08:00 UTC) it shows again.
        #expect(try !cache.claimShown(lunch, shownAt: epoch.addingTimeInterval(180), reportedAt: epoch, reshowAfter: nil))
        #expect(try claim(epoch.addingTimeInterval(16 * 3600)))
        #expect(try cache.outbox(limit: 10).items.count == 3)
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
            error as? ClientError == .corruptCache(path: file.path, newerSchema: nil)
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
        let device = Issued(
            DeviceCredentials(accountID: UUID(), deviceID: UUID(), deviceToken: "secret"),
            issuer: ServerOrigin(URL(string: "http://127.0.0.1:8080")!))
        try home.saveDevice(device)
        #expect(try home.loadDevice() == device)
        let attributes = try FileManager.default.attributesOfItem(atPath: home.deviceFile.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.configDirectory.path)
        #expect(leftovers == ["device.json"])
    }

    @Test func serverURLPrecedence() throws {
        let config = ClientConfig(server: "https://config:1")
        #expect(
            try config.serverURL(flag: "https://flag:2", environment: ["LOYALTY_SERVER": "https://env:3"]).host == "flag")
        #expect(try config.serverURL(flag: nil, environment: ["LOYALTY_SERVER": "https://env:3"]).host == "env")
        #expect(try config.serverURL(flag: nil, environment: [:]).host == "config")
        #expect(try ClientConfig().serverURL(flag: nil, environment: [:]).absoluteString == "http://127.0.0.1:8080")
        #expect(throws: ClientError.self) { try config.serverURL(flag: "ftp://x", environment: [:]) }
    }
}
