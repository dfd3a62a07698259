import Foundation
import JSONCoding
import LoyaltyAPI
import Testing

/// The table-driven coder of the shoppers' and tills' requests and answers against Foundation's: whatever the reader
/// takes, `LoyaltyJSON.decoder()` takes as the same value, so the server answers a body the same whichever reads it;
/// and an answer is the bytes `LoyaltyJSON.encoder()` writes.
@Suite struct ShopperAndTillJSONTests {
    typealias Random = CatalogPageJSONTests.SplitMix64

    private static func decoded<T: RequestBody & Equatable>(_ type: T.Type, _ text: String) -> T? {
        try? LoyaltyJSON.decoder().decode(T.self, from: Data(text.utf8))
    }

    /// Space JSON allows between tokens.
    private static func space(_ random: inout Random) -> String {
        ["", "", " ", "\n", "\t ", "\r\n"].randomElement(using: &random)!
    }

    /// A UUID as a client may write it: either case, or with an escaped digit.
    private static func uuidText(_ uuid: UUID, _ random: inout Random) -> String {
        var text = Bool.random(using: &random) ? uuid.uuidString : uuid.uuidString.lowercased()
        if Int.random(in: 0..<4, using: &random) == 0, let digit = text.firstIndex(where: \.isNumber) {
            text.replaceSubrange(digit...digit, with: String(format: "\\u%04X", text[digit].asciiValue!))
        }
        return "\"\(text)\""
    }

    private static func dateText(_ random: inout Random) -> String {
        let whole = Int.random(in: 0...2_000_000_000, using: &random)
        let date = Date(timeIntervalSince1970: Double(whole))
        var text = LoyaltyJSON.formatTimestamp(date)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: text = text.replacingOccurrences(of: "Z", with: ".250Z")
        case 1: text = text.replacingOccurrences(of: "Z", with: "+02:00")
        case 2: text = text.lowercased()
        default: break
        }
        return "\"\(text)\""
    }

    /// A member the body's type does not have: the reader skips it as the decoder does (the server refuses it).
    private static func unknownMember(_ random: inout Random) -> String {
        let value = ["null", "[1,{\"a\":[]}]", "\"x\\\"y\"", "-1.5e3", "true", "{}"].randomElement(using: &random)!
        return "\"extra\":\(space(&random))\(value)"
    }

    private static func object(_ members: [String], _ random: inout Random) -> String {
        var members = members
        if Int.random(in: 0..<3, using: &random) == 0 { members.append(unknownMember(&random)) }
        members.shuffle(using: &random)
        let joined = members.map { space(&random) + $0 + space(&random) }.joined(separator: ",")
        return "\(space(&random)){\(joined)}\(space(&random))"
    }

    private static func seenPush(_ random: inout Random) -> String {
        let items = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            object(
                [
                    "\"offer_id\":\(space(&random))\(uuidText(CatalogPageJSONTests.uuid(&random), &random))",
                    "\"seen_at\":\(dateText(&random))",
                ], &random)
        }
        return object(["\"items\":[\(items.joined(separator: ","))]"], &random)
    }

    private static func redemption(_ random: inout Random) -> String {
        object(["\"offer_id\":\(uuidText(CatalogPageJSONTests.uuid(&random), &random))"], &random)
    }

    private static func tillCode(_ random: inout Random) -> String {
        let code = ["ABCD-EFGH", "abcd efgh", "A\\/B", "\\u0041BC", "é\\n", ""].randomElement(using: &random)!
        return object(["\"code\":\"\(code)\""], &random)
    }

    /// Each body changed by one edit: a byte dropped, doubled or replaced by one of JSON's own.
    private static func mutated(_ text: String, _ random: inout Random) -> String {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return text }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        let replacement = Array("{}[]\":,0-9aeEfnrtu\\ .+/".utf8).randomElement(using: &random)!
        switch Int.random(in: 0..<3, using: &random) {
        case 0: bytes.remove(at: at)
        case 1: bytes.insert(bytes[at], at: at)
        default: bytes[at] = replacement
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Valid bodies read alike, and so does each body one edit away whenever the reader takes it. `seed` replays.
    private static func check<T: RequestBody & Equatable>(
        _ type: T.Type, seed: UInt64, _ body: (inout Random) -> String
    ) -> (taken: Int, refusedByBoth: Int) {
        var random = Random(state: seed)
        var taken = 0
        var refusedByBoth = 0
        for _ in 0..<1_500 {
            let valid = body(&random)
            let read = T.readByTable(Array(valid.utf8))
            #expect(read != nil && read == decoded(T.self, valid), "seed \(seed): \(valid)")
            let changed = mutated(valid, &random)
            let readChanged = T.readByTable(Array(changed.utf8))
            let decodedChanged = decoded(T.self, changed)
            if let readChanged {
                taken += 1
                #expect(readChanged == decodedChanged, "seed \(seed): the reader took what the decoder did not: \(changed)")
            } else if decodedChanged == nil {
                refusedByBoth += 1
            }
        }
        return (taken, refusedByBoth)
    }

    @Test func theReaderTakesWhatTheDecoderTakesAndNothingElse() {
        let seed = UInt64.random(in: 0...UInt64.max)
        for result in [
            Self.check(SeenPush.self, seed: seed, Self.seenPush),
            Self.check(RedemptionRequest.self, seed: seed, Self.redemption),
            Self.check(TillCodeRequest.self, seed: seed, Self.tillCode),
        ] {
            // The edits exercise both sides: some still read, many break the body.
            #expect(result.taken > 0 && result.refusedByBoth > 100, "seed \(seed): \(result)")
        }
    }

    @Test func answersAreTheBytesTheEncoderWrites() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = Random(state: seed)
        func same(_ value: some Encodable) throws {
            // Bytes compared (String's == would take canonically equivalent text as equal), text shown.
            let expected = Array(try LoyaltyJSON.encoder().encode(value))
            let written = LoyaltyJSON.bytesByTable(value)
            let same = written == expected
            #expect(
                same,
                "seed \(seed): \(written.map { String(decoding: $0, as: UTF8.self) } ?? "nil") is not \(String(decoding: expected, as: UTF8.self))")
        }
        for _ in 0..<500 {
            let maybeDate = Bool.random(using: &random) ? CatalogPageJSONTests.date(&random) : nil
            try same(SeenPushResult(added: .random(in: -5...Int.max, using: &random)))
            try same(
                Redemption(
                    id: CatalogPageJSONTests.uuid(&random), offerID: CatalogPageJSONTests.uuid(&random),
                    code: CatalogPageJSONTests.text(&random), redeemedAt: CatalogPageJSONTests.date(&random),
                    acceptedAt: maybeDate))
            try same(
                TillCode(
                    code: CatalogPageJSONTests.text(&random), status: Bool.random(using: &random) ? .valid : .accepted,
                    offerID: CatalogPageJSONTests.uuid(&random), major: .random(in: 0...65535, using: &random),
                    minor: .random(in: 0...65535, using: &random), title: CatalogPageJSONTests.text(&random),
                    redeemedAt: CatalogPageJSONTests.date(&random), acceptedAt: maybeDate,
                    acceptedTill: Bool.random(using: &random) ? CatalogPageJSONTests.text(&random) : nil))
        }
        #expect(LoyaltyJSON.bytesByTable(RedemptionList(redemptions: [])) == nil)
    }

    @Test func aBodyWithoutATableIsLeftToTheDecoder() {
        #expect(OfferDraft.readByTable(Array("{\"major\":1,\"minor\":2,\"title\":\"t\"}".utf8)) == nil)
        #expect(SeenPush.readByTable(Array("{\"items\":[]} x".utf8)) == nil)
        #expect(SeenPush.readByTable(Array("{\"items\":null}".utf8)) == nil)
        #expect(RedemptionRequest.readByTable(Array("{}".utf8)) == nil)
    }
}
