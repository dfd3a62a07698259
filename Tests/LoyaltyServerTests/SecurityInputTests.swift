import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Security: over-long and oddly encoded input; the HTTP layer's limits and raw request targets
/// need the socket. Driven by openapi.yaml's list of operations (SecurityOperations.swift), so a new route cannot be
/// left out; "nothing changed" is proven from the database rows themselves.
@Suite struct SecurityInputTests {
    /// Every operation with a body: 64 KiB is read, 64 KiB + 1 byte is 413 before any handler runs.
    @Test func everyBodyOverSixtyFourKiBIs413AndOneAtTheLimitIsRead() throws {
        let tenants = try Tenants(.socket)
        let server = tenants.server
        let limit = 64 * 1024
        // An import has a limit of its own (BulkOfferTests).
        let operations = Operation.documented.filter { $0.takesBody && $0.pattern != "/v1/retailer/offers/import" }
        #expect(operations.count == 16)
        let before = try server.rows()
        for operation in operations {
            let call = try #require(tenants.call(operation))
            let reply = try call.padded(to: limit + 1)
                .send(to: server, authorization: operation.credential.map { "Bearer \(tenants.token($0))" })
            #expect(
                reply.status == 413 && reply.errorCode == .payloadTooLarge, "\(operation): \(reply.text)")
        }
        #expect(try server.rows() == before)
        for operation in operations where !operation.rotatesKey {
            let call = try #require(tenants.call(operation)).padded(to: limit)
            #expect(call.body?.count == limit)
            let reply = try call.send(
                to: server, authorization: operation.credential.map { "Bearer \(tenants.token($0))" })
            #expect((200..<300).contains(reply.status), "\(operation): \(reply.status) \(reply.text)")
        }
    }

    /// Every string field at its limit is stored as sent; one more is 422 naming the field. Limits count code
    /// points, as the schema's maxLength does: one "character" of many combining marks is not one.
    @Test func everyStringFieldHoldsItsLimitInCodePointsAndNotOneMore() throws {
        let tenants = try Tenants()
        for field in tenants.stringFields() {
            let atLimit =
                field.prefix + String(repeating: "x", count: field.maxLength - field.prefix.count)
            try field.expectStored(atLimit, tenants)
            try field.expectRefused(atLimit + "x", tenants)
            guard field.isFreeText else { continue }
            let marks = "e" + String(repeating: "\u{301}", count: field.maxLength - 1)
            try field.expectStored(marks, tenants)
            try field.expectRefused(marks + "\u{301}", tenants)
            try field.expectStored(String(repeating: "\u{1F600}", count: field.maxLength), tenants)
        }
    }

    /// Request lines and headers beyond what the server reads are refused by the HTTP layer (414, 431);
    /// long values that fit get the JSON error of their field; nothing is written, and the server goes on.
    @Test func overlongPathsQueriesAndHeadersAreRefused() throws {
        let tenants = try Tenants(.socket)
        let server = tenants.server
        let key = tenants.alice.apiKey
        let device = tenants.ann.deviceToken
        let long = String(repeating: "a", count: 10_000)
        let huge = String(repeating: "a", count: 200_000)
        let before = try server.rows()

        #expect(try server.raw("GET", "/v1/retailer?\(huge)=1", token: key).status == 414)
        #expect(
            try server.raw("GET", "/v1/retailer", headerLines: ["X-Padding: \(huge)"]).status == 431)
        #expect(try server.raw("GET", "/v1/retailer", token: huge).status == 431)
        let longStore = try server.raw("DELETE", "/v1/retailer/stores/\(long)", token: key)
        #expect(longStore.status == 422 && longStore.errorField == "store_id")
        let longMajor = try server.raw(
            "DELETE", "/v1/retailer/offers/\(String(repeating: "1", count: 10_000))/1", token: key)
        #expect(longMajor.status == 422 && longMajor.errorField == "major")
        let longSince = try server.raw("GET", "/v1/seen?since=\(long)", token: device)
        #expect(longSince.status == 400 && longSince.errorField == "since")
        let longNear = try server.raw("GET", "/v1/catalog?near=1.\(long),2", token: device)
        #expect(longNear.status == 422 && longNear.errorField == "near", "\(longNear.text)")
        #expect(try server.raw("GET", "/v1/retailer", token: "lk_\(long)").status == 401)
        let longID = try server.raw(
            "GET", "/v1/retailer", token: key, headerLines: ["X-Request-Id: \(long)"])
        #expect(longID.status == 200 && (longID.headers["x-request-id"]?.count ?? 0) <= 64)
        let longKey = try server.raw(
            "POST", "/v1/redemptions", token: device, headerLines: ["Idempotency-Key: \(long)"],
            body: Array(#"{"offer_id":"\#(tenants.sushi.id)"}"#.utf8))
        #expect(longKey.status == 400 && longKey.errorField == "Idempotency-Key")
        let manyHeaders = (0..<3_000).map { "X-H\($0): \(String(repeating: "v", count: 50))" }
        #expect(
            try server.raw("GET", "/v1/retailer", token: key, headerLines: manyHeaders).status == 431)

        #expect(try server.rows() == before)
        #expect(try server.request("GET", "/v1/retailer", token: key).status == 200)
    }

    // MARK: Odd encodings

    /// Bytes that are not UTF-8 (invalid, overlong, surrogates, truncated), raw control bytes and lone
    /// surrogate escapes are 400 in every string field, an escaped NUL 422; none is stored. Valid but unusual
    /// text (either normalisation form, a BOM or a bidi override inside, an escaped pair) is stored byte for byte.
    @Test func oddlyEncodedStringsAreRefusedOrStoredByteForByte() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let malformed: [[UInt8]] = [
            [0x61, 0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xE2, 0x82], [0x00], [0x1F], Array(#"\ud800"#.utf8), Array(#"x\udc00"#.utf8),
            Array(#"\ud800\u0041"#.utf8), Array(#"\x41"#.utf8),
        ]
        let verbatim = [
            // Controls and bidirectional overrides are refused (HostileInputTests).
            "Caf\u{E9}", "Cafe\u{301}", "\u{FEFF}bom inside", "\u{1F600}",
            "\u{FFFD}", "Ａ fullwidth", "\u{212B} angstrom",
        ]
        var refused = 0
        for field in tenants.stringFields() {
            for content in malformed {
                let template = try field.template(tenants)
                let before = try server.rows()
                let reply = try template.send(to: server, content: content)
                #expect(
                    reply.status == 400 && reply.errorCode == .malformedJSON,
                    "\(field) with \(content): \(reply.status) \(reply.text)")
                #expect(try server.rows() == before, "\(field) with \(content) wrote to the database")
                refused += 1
            }
            let nul = try field.template(tenants).send(to: server, content: Array(#"a\u0000b"#.utf8))
            #expect(nul.status == 422 && nul.errorField == field.field, "\(field): \(nul.text)")
            guard field.isFreeText else { continue }
            // A retailer name that reads as one registered just before is refused (RetailerTests): Café twice.
            for text in verbatim where !(field.isFolded && text == "Cafe\u{301}") { try field.expectStored(text, tenants) }
            guard !field.isFolded else { continue }  // the escaped pair is the 😀 registered above
            let escapedPair = try field.template(tenants).send(
                to: server, content: Array(#"\ud83d\ude00"#.utf8))
            #expect(
                try field.readBack(tenants, escapedPair).map { Array($0.utf8) } == Array("\u{1F600}".utf8))
        }
        #expect(refused == tenants.stringFields().count * malformed.count)

        // A byte order mark before the body may be ignored (RFC 8259 section 8.1); it is, and not stored.
        let bom = try server.request(
            "PUT", "/v1/retailer/offers/4/4", token: tenants.alice.apiKey,
            body: [0xEF, 0xBB, 0xBF] + Array(#"{"title":"t"}"#.utf8))
        #expect(bom.status == 201)
        #expect(try bom.decode(Offer.self).title == "t")

        // JSON between systems is UTF-8 (RFC 8259 section 8.1). A body in UTF-16 or UTF-32 is refused, not
        // read: a proxy or a log that takes the bytes for UTF-8 would see another request than the server.
        let text = #"{"title":"utf16"}"#
        let before = try server.rows()
        for (encoding, bom) in [
            (String.Encoding.utf16BigEndian, [0xFE, 0xFF]), (.utf16LittleEndian, [0xFF, 0xFE]),
            (.utf16BigEndian, []), (.utf16LittleEndian, []), (.utf32BigEndian, [0, 0, 0xFE, 0xFF]),
            (.utf32LittleEndian, []),
        ] as [(String.Encoding, [UInt8])] {
            let body = bom + Array(try #require(text.data(using: encoding)))
            let reply = try server.request("PUT", "/v1/retailer/offers/4/5", token: tenants.alice.apiKey, body: body)
            #expect(reply.status == 400 && reply.errorCode == .malformedJSON, "\(encoding) \(bom): \(reply.text)")
        }
        #expect(try server.rows() == before)
    }

    /// Percent-encoded path segments are decoded once and never resolved: `%2e%2e` does not climb to another
    /// route, `%00` does not cut the path short (it did: `stores/carnaby%00x` deleted store `carnaby`), `%2F`
    /// does not make a store id of two segments.
    @Test func percentEncodedPathSegmentsReachNoOtherResource() throws {
        let tenants = try Tenants(.socket)
        let server = tenants.server
        let key = tenants.alice.apiKey
        let before = try server.rows()
        let refused: [(String, String, Set<Int>)] = [
            ("DELETE", "/v1/retailer/stores/carnaby%00x", [422]),
            ("DELETE", "/v1/retailer/stores/carnaby%00", [422]),
            ("DELETE", "/v1/retailer/offers/1%00/1", [422]),
            ("DELETE", "/v1/retailer/offers/2/2%002", [422]),
            ("DELETE", "/v1/retailer/stores/carnaby%2F..", [404]),
            ("DELETE", "/v1/retailer/stores/%2e%2e/..%2fstores%2fcarnaby", [404]),
            ("POST", "/v1/retailer/offers/%2e%2e/key", [405]),
            ("POST", "/v1/retailer/stores/%2E%2E/key", [404]),
            ("PUT", "/v1/retailer/stores/%2e%2e", [422]),
            ("PUT", "/v1/retailer/stores/%2e", [422]),
            ("PUT", "/v1/retailer/stores/caf%C3%A9", [422]),
            ("PUT", "/v1/retailer/stores/%C0%AE%C0%AE", [422]),
            ("PUT", "/v1/retailer/stores/%ff", [422]),
            ("PUT", "/v1/retailer/offers/%EF%BC%91/1", [422]),
            ("DELETE", "/v1/devices/%00", [404]),
            ("DELETE", "/v1/devices/\(tenants.annTablet.deviceID)%00", [404]),
        ]
        let store = Array(#"{"name":"n","latitude":1,"longitude":1,"radius_m":100}"#.utf8)
        for (method, target, statuses) in refused {
            let token = target.hasPrefix("/v1/devices") ? tenants.ann.deviceToken : key
            let reply = try server.raw(method, target, token: token, body: method == "PUT" ? store : nil)
            #expect(statuses.contains(reply.status), "\(method) \(target): \(reply.status) \(reply.text)")
            #expect(reply.errorCode != nil, "\(method) \(target): not a JSON error: \(reply.text)")
        }
        #expect(try server.rows() == before, "an encoded path reached a resource")
        #expect(
            try server.request("GET", "/v1/retailer", token: key).status == 200, "the key was rotated")
        // Encoded ordinary characters are still just those characters.
        let encoded = try server.raw("DELETE", "/v1/retailer/stores/%63arnaby", token: key)
        #expect(encoded.status == 204)
        #expect(try server.stores(tenants.alice).map(\.storeID) == ["rivoli"])
    }
}
