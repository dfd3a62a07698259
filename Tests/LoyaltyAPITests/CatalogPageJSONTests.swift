import Foundation
import JSONCoding
import LoyaltyAPI
import Testing

/// The catalog page's own coder against Foundation's: the same bytes out, the same values in.
@Suite struct CatalogPageJSONTests {
    /// Seeded, so a failure replays.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet: [String] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1}", "\u{1F}",
        "\u{7F}", "é", "ß", "€", "日本", "😀", "👩‍👩‍👧", "\u{2028}", "\u{FEFF}", "<", "&",
    ]

    static func text(_ random: inout SplitMix64) -> String {
        (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
    }

    static func uuid(_ random: inout SplitMix64) -> UUID {
        var octets: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &octets) { octets in
            for index in octets.indices { octets[index] = .random(in: 0...255, using: &random) }
        }
        return UUID(uuid: octets)
    }

    static func date(_ random: inout SplitMix64) -> Date {
        // Whole milliseconds, so both coders' text reads back to the same value.
        Date(timeIntervalSince1970: Double(Int64.random(in: -62_167_219_200_000...253_402_300_799_999, using: &random)) / 1000)
    }

    static func integer(_ random: inout SplitMix64) -> Int {
        [Int.min, Int.max, 0, -1, 1, Int(Int32.max), Int.random(in: Int.min...Int.max, using: &random)]
            .randomElement(using: &random)!
    }

    static func double(_ random: inout SplitMix64) -> Double {
        [
            0, -0.0, 1, -180, 90, 51.5136, -0.1365, 1e-7, 123_456_789.125, Double.leastNonzeroMagnitude,
            Double.greatestFiniteMagnitude, 1e21, Double.random(in: -180...180, using: &random),
        ].randomElement(using: &random)!
    }

    static func page(_ random: inout SplitMix64) -> CatalogPage {
        func maybe<T>(_ value: T) -> T? { Bool.random(using: &random) ? value : nil }
        let offers = (0..<Int.random(in: 0...30, using: &random)).map { _ in
            Offer(
                id: uuid(&random), retailerID: uuid(&random), major: .random(in: 0...UInt16.max, using: &random),
                minor: .random(in: 0...UInt16.max, using: &random), title: text(&random),
                description: maybe(text(&random)), category: maybe(text(&random)), imageURL: maybe(text(&random)),
                startsAt: maybe(date(&random)), endsAt: maybe(date(&random)), perShopperLimit: integer(&random),
                totalLimit: maybe(integer(&random)), reshowAfterSeconds: maybe(integer(&random)),
                updatedAt: date(&random))
        }
        let stores = (0..<Int.random(in: 0...5, using: &random)).map { _ in
            RetailStore(
                id: uuid(&random), retailerID: uuid(&random), storeID: text(&random), name: text(&random),
                latitude: double(&random), longitude: double(&random), radiusMetres: integer(&random),
                updatedAt: date(&random))
        }
        return CatalogPage(
            cursor: text(&random), full: .random(using: &random), more: .random(using: &random),
            serverTime: date(&random),
            retailers: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                CatalogRetailer(id: uuid(&random), name: text(&random), uuid: uuid(&random))
            },
            offers: offers,
            removed: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                CatalogTombstone(id: uuid(&random), retailerID: uuid(&random))
            },
            stores: stores,
            removedStores: (0..<Int.random(in: 0...3, using: &random)).map { _ in
                CatalogTombstone(id: uuid(&random), retailerID: uuid(&random))
            })
    }

    @Test(arguments: 0..<200 as Range<UInt64>)
    func writesFoundationsBytesAndReadsThemBack(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let page = Self.page(&random)
        let foundation = Array(try LoyaltyJSON.encoder().encode(page))
        let own = try page.json()
        #expect(String(decoding: own, as: UTF8.self) == String(decoding: foundation, as: UTF8.self))
        let expected = try LoyaltyJSON.decoder().decode(CatalogPage.self, from: Data(foundation))
        let read = try CatalogPage(json: foundation)
        #expect(read == expected)
        #expect(try read.json() == foundation)
    }

    @Test func readsWhatFoundationReadsInOtherSpellings() throws {
        let json = """
             { "unknown": [1, {"a": [null, true, false, "x\\u0041"]}, -2.5e3],
              "\\u0063ursor" : "c\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\"\\\\", "full": false, "more": true,
              "server_time": "2026-01-31T10:00:00.5+01:00", "retailers": [],
              "offers": [{"id": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "retailer_id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                "major": 1.0, "minor": 2e2, "title": "T", "description": null, "category": "food",
                "starts_at": null, "total_limit": 5, "per_shopper_limit": 1, "updated_at": "2026-01-31T09:00:00Z",
                "extra": {"nested": {}}}],
              "removed": [], "stores": [{"id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                "retailer_id": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "store_id": "s", "name": "n",
                "latitude": -0.1365e1, "longitude": 1E2, "radius_m": 100, "updated_at": "2026-01-31T09:00:00Z"}],
              "removed_stores": [], "\\u0078tra": true }\t\r\n
            """
        let bytes = Array(json.utf8)
        let expected = try LoyaltyJSON.decoder().decode(CatalogPage.self, from: Data(bytes))
        let page = try CatalogPage(json: bytes)
        #expect(page == expected)
        #expect(page.cursor == "cé😀/\u{8}\u{C}\n\r\t\"\\")
        #expect(!page.full && page.more)
        #expect(page.offers.first?.minor == 200)
    }

    static let valid = """
        {"cursor":"c","full":true,"more":false,"offers":[{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F",\
        "major":1,"minor":2,"per_shopper_limit":1,"retailer_id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F",\
        "title":"T","updated_at":"2026-01-31T09:00:00Z"}],"removed":[],"removed_stores":[],"retailers":[],\
        "server_time":"2026-01-31T09:00:00Z","stores":[]}
        """

    /// `valid` with one piece of text replaced.
    static func valid(_ piece: String, _ replacement: String) -> String {
        valid.replacingOccurrences(of: piece, with: replacement)
    }

    static let malformed: [String] = [
        "", " ", "[]", "null", "{", "{}", "{\"cursor\":\"c\"}",
        valid + "x", valid + "{}", String(valid.dropLast()),
        valid("\"major\":1", "\"major\":65536"),
        valid("\"major\":1", "\"major\":-1"),
        valid("\"major\":1", "\"major\":1.5"),
        valid("\"major\":1", "\"major\":\"1\""),
        valid("\"major\":1", "\"major\":01"),
        valid("\"major\":1", "\"major\":1e400"),
        valid("\"per_shopper_limit\":1", "\"per_shopper_limit\":99999999999999999999"),
        valid("\"per_shopper_limit\":1,", ""),
        valid("\"title\":\"T\"", "\"title\":null"),
        valid("\"title\":\"T\"", "\"title\":\"\\ud800\""),
        valid("\"title\":\"T\"", "\"title\":\"\\udc00x\""),
        valid("\"title\":\"T\"", "\"title\":\"\\u12\""),
        valid("\"title\":\"T\"", "\"title\":\"\\x\""),
        valid("\"title\":\"T\"", "\"title\":\"a\tb\""),
        valid("\"full\":true", "\"full\":1"),
        valid("\"full\":true", "\"full\":tru"),
        valid("E621E1F8-C36C", "E621E1F8+C36C"),
        valid("E621E1F8-C36C", "G621E1F8-C36C"),
        valid("E621E1F8-C36C", "E621E1F8-C36"),
        valid("\"2026-01-31T09:00:00Z\"", "\"2026-02-30T09:00:00Z\""),
        valid("\"removed\":[]", "\"removed\":[,]"),
        valid("\"removed\":[]", "\"removed\":[{}]"),
        valid("\"stores\":[]", "\"stores\":{}"),
    ]

    @Test(arguments: malformed)
    func refusesWhatFoundationRefuses(json: String) {
        let bytes = Array(json.utf8)
        #expect(throws: (any Error).self) { try LoyaltyJSON.decoder().decode(CatalogPage.self, from: Data(bytes)) }
        #expect(throws: JSONCodingError.self) { try CatalogPage(json: bytes) }
    }

    /// The table says which fields must be there: the error names the first one missing and its object.
    @Test(arguments: [
        ("\"title\":\"T\",", "the offer has no \"title\""),
        ("\"updated_at\":\"2026-01-31T09:00:00Z\"}", "the offer has no \"updated_at\""),
        ("\"removed_stores\":[],", "the page has no \"removed_stores\""),
    ])
    func namesTheMissingField(piece: String, message: String) throws {
        let json = Self.valid(piece, piece.hasSuffix("}") ? "\"x\":0}" : "")
        #expect(json != Self.valid)
        #expect(throws: (any Error).self) { try LoyaltyJSON.decoder().decode(CatalogPage.self, from: Data(json.utf8)) }
        do {
            _ = try CatalogPage(json: Array(json.utf8))
            Issue.record("read a page without a required field")
        } catch {
            #expect(error.message == message)
        }
    }

    @Test func refusesDeepNestingWithoutExhaustingTheStack() {
        let json = Self.valid.replacingOccurrences(
            of: "\"cursor\":\"c\"", with: "\"x\":" + String(repeating: "[", count: 100_000))
        #expect(throws: JSONCodingError.self) { try CatalogPage(json: Array(json.utf8)) }
    }

    /// Read as the client stores a page from its file: the rows come one at a time, the same as whole, and the
    /// reader says how far it is at least every 4 MiB; a string longer than any the API writes is refused.
    @Test(arguments: 0..<50 as Range<UInt64>)
    func readsRowsOneAtATimeAsWhole(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let whole = Self.page(&random)
        let bytes = try whole.json()
        var rows = whole
        (rows.retailers, rows.offers, rows.removed, rows.stores, rows.removedStores) = ([], [], [], [], [])
        let head = try bytes.withUnsafeBufferPointer { bytes in
            try CatalogPage.read(json: bytes, rows: { row in
                switch row {
                case .retailer(let retailer): rows.retailers.append(retailer)
                case .offer(let offer): rows.offers.append(offer)
                case .removed(let tombstone): rows.removed.append(tombstone)
                case .store(let store): rows.stores.append(store)
                case .removedStore(let tombstone): rows.removedStores.append(tombstone)
                }
                return true
            }, progress: { _ in })
        }
        #expect(rows == whole && head.cursor == whole.cursor && head.offers.isEmpty)
    }

    @Test func aLongPageTellsItsProgressAndALongStringIsRefused() throws {
        let spaced = Array(Self.valid.replacingOccurrences(
            of: "\"cursor\"", with: String(repeating: " ", count: 9 << 20) + "\"cursor\"").utf8)
        var told: [Int] = []
        _ = try spaced.withUnsafeBufferPointer { bytes in
            try CatalogPage.read(json: bytes, rows: { _ in true }, progress: { told.append($0) })
        }
        #expect(told.count == 2 && told.allSatisfy { $0 < 9 << 20 })
        let long = Array(Self.valid("\"T\"", "\"\(String(repeating: "T", count: 70_000))\"").utf8)
        #expect(throws: JSONCodingError.self) { try CatalogPage(json: long) }
    }

    @Test func theValidSampleIsValid() throws {
        #expect(try CatalogPage(json: Array(Self.valid.utf8)).offers.count == 1)
    }

    @Test func refusesBytesThatAreNotUTF8() {
        var bytes = Array(Self.valid.utf8)
        let title = bytes.firstRange(of: Array("\"T\"".utf8))!
        bytes[title.lowerBound + 1] = 0xFF
        #expect(throws: JSONCodingError.self) { try CatalogPage(json: bytes) }
    }

    @Test func refusesNonFiniteCoordinates() throws {
        var page = try CatalogPage(json: Array(Self.valid.utf8))
        page.stores = [
            RetailStore(
                id: UUID(), retailerID: UUID(), storeID: "s", name: "n", latitude: .nan, longitude: 0,
                radiusMetres: 10, updatedAt: Date(timeIntervalSince1970: 0))
        ]
        #expect(throws: JSONCodingError.self) { try page.json() }
    }
}
