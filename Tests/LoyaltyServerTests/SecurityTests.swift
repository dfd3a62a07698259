import Foundation
import LoyaltyAPI
import Postgres
import Testing

@testable import LoyaltyServer

/// Issue 7's security checks, driven by openapi.yaml's list of operations so that a new route cannot be
/// left out: every protected route with every wrong credential, each tenant against the other's
/// resources, over-long and oddly encoded input, SQL metacharacters in every string field, and secrets
/// kept out of logs and error answers. "Nothing changed" is proven from the database rows themselves.
@Suite struct SecurityTests {
    // MARK: Credentials

    @Test func everyOperationHasARequestInTheSecurityTable() throws {
        let tenants = try Tenants()
        let documented = Operation.documented
        #expect(documented.count >= 24)
        let missing = documented.filter { tenants.call($0) == nil }
        #expect(
            missing.isEmpty, "operations of openapi.yaml with no request in Tenants.call: \(missing)")
        // No global `security:` in the document: an operation without its own is public.
        #expect(!String(decoding: Documents.openAPI, as: UTF8.self).contains("\nsecurity:"))
        #expect(
            documented.filter { $0.credential == nil }.map(\.description).sorted() == [
                "GET /healthz", "GET /metrics", "GET /openapi.yaml", "GET /readyz", "POST /v1/accounts",
                "POST /v1/devices",
            ])
    }

    /// Every protected operation, called with each wrong credential: 401 for none, malformed, forged, revoked
    /// or rotated-out ones, 403 for a valid one of another kind; and not one row written by any of them.
    @Test func everyProtectedOperationRefusesEveryWrongCredential() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let protected = Operation.documented.filter { $0.credential != nil }
        let before = try server.rows()
        var attempts = 0
        for operation in protected {
            let call = try #require(tenants.call(operation))
            for attempt in tenants.wrongCredentials(for: operation.credential!) {
                let reply = try call.send(to: server, authorization: attempt.authorization)
                attempts += 1
                let context = "\(operation) with \(attempt.name): \(reply.status) \(reply.text)"
                #expect(reply.status == attempt.status, "\(context)")
                if attempt.status == 401 {
                    #expect(
                        reply.errorCode == .unauthorized && reply.headers["www-authenticate"] == "Bearer",
                        "\(context)")
                } else {
                    #expect(reply.errorCode == .forbidden, "\(context)")
                }
            }
        }
        #expect(protected.count == 18 && attempts == 18 * 10)
        #expect(try server.rows() == before, "a refused request wrote to the database")

        // The same requests with the right credential succeed, so the refusals above were about the
        // credential and nothing else. Rotating the key goes last: it retires the key the others use.
        for operation in Operation.documented.sorted(by: { !$0.rotatesKey && $1.rotatesKey }) {
            let call = try #require(tenants.call(operation))
            let reply = try call.send(
                to: server, authorization: operation.credential.map { "Bearer \(tenants.token($0))" })
            #expect((200..<300).contains(reply.status), "\(operation): \(reply.status) \(reply.text)")
        }
    }

    /// Bob's key on every retailer operation, aimed at Alice's offers and stores: he only ever reaches his own
    /// (an empty list, a new offer or store of his, 404), and Alice's rows and key are as they were.
    @Test func aRetailerKeyReachesOnlyItsOwnRetailer() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let alicesIDs = [tenants.alice.id, tenants.sushi.id, tenants.pizza.id]
        let before = try server.rows(mentioning: alicesIDs)
        let operations = Operation.documented.filter { $0.credential == .retailerKey }
            .sorted { !$0.rotatesKey && $1.rotatesKey }
        #expect(operations.count == 9)
        for operation in operations {
            let reply = try #require(tenants.call(operation)).send(
                to: server, authorization: "Bearer \(tenants.bob.apiKey)")
            let context = "\(operation): \(reply.status) \(reply.text)"
            switch operation.method {
            case "DELETE": #expect(reply.status == 404, "\(context)")
            case "PUT":
                #expect(
                    reply.status == 201, "a new resource of Bob's, not a replacement of Alice's: \(context)")
            default: #expect(reply.status == 200, "\(context)")
            }
            for id in alicesIDs { #expect(!reply.text.contains(id.uuidString), "\(context)") }
        }
        #expect(try server.rows(mentioning: alicesIDs) == before, "Bob's requests changed Alice's rows")
        let alice: Retailer = try server.request("GET", "/v1/retailer", token: tenants.alice.apiKey)
            .decode()
        #expect(alice.id == tenants.alice.id, "Bob rotating his key retired Alice's")
    }

    /// Ben's device token on every shopper operation, aimed at Ann's devices, seen set and redemptions.
    @Test func aDeviceTokenReachesOnlyItsOwnAccount() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let before = try server.rows(mentioning: [tenants.ann.accountID])
        let operations = Operation.documented.filter { $0.credential == .deviceToken }
        #expect(operations.count == 8)
        let annsSecrets = [
            tenants.ann.accountID.uuidString, tenants.ann.deviceID.uuidString,
            tenants.annTablet.deviceID.uuidString,
            tenants.annRedemption.id.uuidString, tenants.annRedemption.code,
        ]
        for operation in operations {
            let reply = try #require(tenants.call(operation))
                .send(to: server, authorization: "Bearer \(tenants.ben.deviceToken)")
            let context = "\(operation): \(reply.status) \(reply.text)"
            if operation.method == "DELETE" {
                #expect(reply.status == 404, "\(context)")
            } else {
                #expect((200..<300).contains(reply.status), "\(context)")
            }
            #expect(
                reply.headers["idempotent-replayed"] == nil,
                "Ann's Idempotency-Key replayed for Ben: \(context)")
            for secret in annsSecrets { #expect(!reply.text.contains(secret), "\(context)") }
            if operation.pattern == "/v1/link-codes" {
                let code: LinkCode = try reply.decode()
                let linked: DeviceCredentials = try server.request(
                    "POST", "/v1/devices", json: DeviceRegistration(code: code.code)
                ).decode()
                #expect(linked.accountID == tenants.ben.accountID)
            }
        }
        #expect(
            try server.rows(mentioning: [tenants.ann.accountID]) == before,
            "Ben's requests changed Ann's rows")
    }

    // MARK: Over-long input

    /// Every operation with a body: 64 KiB is read, 64 KiB + 1 byte is 413 before any handler runs.
    @Test func everyBodyOverSixtyFourKiBIs413AndOneAtTheLimitIsRead() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let limit = 64 * 1024
        let operations = Operation.documented.filter(\.takesBody)
        #expect(operations.count == 7)
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
        let tenants = try Tenants()
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
            for text in verbatim { try field.expectStored(text, tenants) }
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
        let tenants = try Tenants()
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

    // MARK: SQL metacharacters

    static let sqlPayloads = [
        "'; DROP TABLE offers; --", "' OR '1'='1", "\\", "\\'", "''", "$1", "$$", "$tag$ x $tag$", "%",
        "_", "%_%",
        "\"", "`", "-- comment", "/* comment", ";", "\\x00", "E'\\n'",
        "'||(SELECT api_key_hash FROM retailers)||'",
        "1; SELECT pg_sleep(5)", "NULL", ":name ?",
    ]

    /// Each payload in each string field is stored and read back as sent (an image URL may be refused as
    /// no URL, never with a 500); the payloads in a link code find no code; the tables are all still there.
    @Test func sqlMetacharactersInEveryStringFieldAreJustText() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let tables = try server.rows().keys.sorted()
        #expect(tables.count >= 9)
        for field in tenants.stringFields() {
            for payload in Self.sqlPayloads {
                let value = field.prefix + payload
                if field.isFreeText {
                    try field.expectStored(value, tenants)
                    continue
                }
                if field.field == "code" {
                    let reply = try field.template(tenants).send(
                        to: server, content: jsonStringContent(value))
                    let tooLong = value.unicodeScalars.count > field.maxLength
                    #expect(
                        reply.status == (tooLong ? 422 : 404) && reply.errorCode != nil,
                        "\(payload): \(reply.text)")
                } else if payload.contains(where: { " \"\\`".contains($0) }) {
                    try field.expectRefused(value, tenants)  // not a URI character (RFC 3986)
                } else {
                    try field.expectStored(value, tenants)
                }
            }
        }
        #expect(try server.rows().keys.sorted() == tables)
        let offers: OfferList = try server.request(
            "GET", "/v1/retailer/offers", token: tenants.alice.apiKey
        ).decode()
        #expect(offers.offers.count == 3)
        #expect(try server.catalog(tenants.ann).status == 200)
    }

    /// Idempotency keys are compared exactly: `%` or `_` matches no other key, and each replays only itself.
    @Test func sqlMetacharactersInTheIdempotencyKeyMatchOnlyThemselves() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let generous = try server.putOffer(
            tenants.alice, major: 9, minor: 9, OfferDraft(title: "many", perShopperLimit: 1_000))
        let other = try server.putOffer(
            tenants.alice, major: 9, minor: 8, OfferDraft(title: "other", perShopperLimit: 1_000))
        let first = try server.redeem(tenants.ben, generous.id, key: "k-1")
        #expect(first.status == 201)
        var redemptions: [String: Redemption] = [:]
        for key in Self.sqlPayloads + ["k%", "_-1", "K-1", "k-_"] {
            let reply = try server.redeem(tenants.ben, other.id, key: key)
            #expect(
                reply.status == 201 && reply.headers["idempotent-replayed"] == nil, "\(key): \(reply.text)")
            redemptions[key] = try reply.decode()
        }
        for (key, redemption) in redemptions {
            let replay = try server.redeem(tenants.ben, other.id, key: key)
            #expect(replay.headers["idempotent-replayed"] == "true", "\(key)")
            #expect(try replay.decode(Redemption.self) == redemption, "\(key)")
        }
        #expect(Set(redemptions.values.map(\.id)).count == redemptions.count)
    }

    /// Metacharacters in query parameters and path segments meet validation, never the database.
    @Test func sqlMetacharactersInQueriesAndPathsAreValidationErrors() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let before = try server.rows()
        let device = tenants.ann.deviceToken
        let key = tenants.alice.apiKey
        for payload in Self.sqlPayloads {
            let encoded = payload.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            // (method, target, token, the statuses allowed, the field the error names when it must name one)
            let requests: [(String, String, String, Set<Int>, String?)] = [
                ("GET", "/v1/seen?since=\(encoded)", device, [400], "since"),
                ("GET", "/v1/catalog?since=\(encoded)", device, [400], "since"),
                ("GET", "/v1/catalog?near=\(encoded)", device, [422], "near"),
                ("DELETE", "/v1/retailer/stores/\(encoded)", key, [404, 422], nil),
                ("DELETE", "/v1/retailer/offers/\(encoded)/1", key, [404, 405, 422], nil),
                ("DELETE", "/v1/devices/\(encoded)", device, [404, 405], nil),
            ]
            for (method, target, token, statuses, field) in requests {
                let reply = try server.request(method, target, token: token)
                #expect(statuses.contains(reply.status) && reply.errorCode != nil, "\(target): \(reply.text)")
                if let field { #expect(reply.errorField == field, "\(target): \(reply.text)") }
            }
        }
        #expect(try server.rows() == before)
    }

    // MARK: Secrets

    /// A whole session, failures included: no token, key, link code or redemption code, nor the digest the
    /// database keeps of it, appears in a log line, an error answer or the metrics. (PostgresTests proves
    /// that connection errors never show the conninfo's password.)
    @Test func secretsNeverAppearInLogsOrErrorAnswers() throws {
        let server = try TestServer()
        var replies: [Reply] = []
        func send(
            _ method: String, _ path: String, token: String? = nil, json: (any Encodable)? = nil,
            headers: [String: String] = [:]
        ) throws -> Reply {
            let body = try json.map { Array(try LoyaltyJSON.encoder().encode($0)) }
            let reply = try server.request(method, path, token: token, body: body, headers: headers)
            replies.append(reply)
            return reply
        }
        let registered: RetailerCredentials = try send(
            "POST", "/v1/retailers", token: server.operatorToken,
            json: RetailerRegistration(name: "Matey's")
        ).decode()
        let rotated: APIKey = try send("POST", "/v1/retailer/key", token: registered.apiKey).decode()
        let offer: Offer = try send(
            "PUT", "/v1/retailer/offers/1/1", token: rotated.apiKey,
            json: OfferDraft(title: "sushi", perShopperLimit: 2)
        ).decode()
        let phone: DeviceCredentials = try send(
            "POST", "/v1/accounts", json: DeviceRegistration(name: "phone")
        ).decode()
        let code: LinkCode = try send("POST", "/v1/link-codes", token: phone.deviceToken).decode()
        let laptop: DeviceCredentials = try send(
            "POST", "/v1/devices", json: DeviceRegistration(code: code.code)
        ).decode()
        let unused: LinkCode = try send("POST", "/v1/link-codes", token: laptop.deviceToken).decode()
        let redemption: Redemption = try send(
            "POST", "/v1/redemptions", token: phone.deviceToken,
            json: RedemptionRequest(offerID: offer.id),
            headers: ["Idempotency-Key": "first"]
        ).decode()
        #expect(
            try send("DELETE", "/v1/devices/\(laptop.deviceID)", token: phone.deviceToken).status == 204)

        // Failures: every kind of wrong credential, a reused code, bad bodies.
        let failures = [
            try send("GET", "/v1/retailer", token: registered.apiKey),
            try send("GET", "/v1/retailer", token: rotated.apiKey + "x"),
            try send("GET", "/v1/retailer", headers: ["Authorization": "Basic \(rotated.apiKey)"]),
            try send(
                "POST", "/v1/retailers", token: server.operatorToken + "x",
                json: RetailerRegistration(name: "x")),
            try send(
                "POST", "/v1/retailers", token: rotated.apiKey, json: RetailerRegistration(name: "x")),
            try send("GET", "/v1/devices", token: laptop.deviceToken),
            try send("GET", "/v1/catalog", token: rotated.apiKey),
            try send("GET", "/v1/retailer", token: phone.deviceToken),
            try send("POST", "/v1/devices", json: DeviceRegistration(code: code.code)),
            try send("POST", "/v1/devices", json: DeviceRegistration(code: unused.code + "X")),
            try send(
                "POST", "/v1/devices", token: phone.deviceToken,
                json: ["code": unused.code, "token": phone.deviceToken]),
            try send("PUT", "/v1/retailer/offers/1/1", token: rotated.apiKey, json: ["title": 5]),
            try send(
                "POST", "/v1/redemptions", token: phone.deviceToken,
                json: RedemptionRequest(offerID: offer.id),
                headers: ["Idempotency-Key": "second\u{7F}"]),
            try send("GET", "/v1/seen?since=\(phone.deviceToken)", token: phone.deviceToken),
        ]
        #expect(failures.allSatisfy { $0.status >= 400 && $0.errorCode != nil })
        let metrics = try send("GET", "/metrics").text

        let secrets = [
            server.operatorToken, registered.apiKey, rotated.apiKey, phone.deviceToken,
            laptop.deviceToken, code.code,
            unused.code, redemption.code,
        ]
        let lines = server.log.recorded
        #expect(lines.count == replies.count, "one log line per request")
        let errorAnswers = replies.filter { $0.status >= 400 }.map { reply in
            reply.text + reply.headers.map { "\($0): \($1)" }.joined(separator: "\n")
        }
        for secret in secrets {
            for form in leakForms(of: secret) {
                for line in lines { #expect(!line.contains(form), "log line holds \(secret): \(line)") }
                for answer in errorAnswers {
                    #expect(!answer.contains(form), "error answer holds \(secret): \(answer)")
                }
                #expect(!metrics.contains(form))
            }
        }
    }
}

// MARK: Operations

/// The credential an operation needs, named as openapi.yaml's security schemes.
enum Credential: String, CaseIterable {
    case operatorToken, retailerKey, deviceToken
}

/// An operation of openapi.yaml, such as "PUT /v1/retailer/offers/{major}/{minor}".
struct Operation: CustomStringConvertible {
    var method: String
    var pattern: String
    /// nil when the operation is public.
    var credential: Credential?
    var takesBody = false

    var description: String { "\(method) \(pattern)" }
    var rotatesKey: Bool { method == "POST" && pattern == "/v1/retailer/key" }

    /// Every operation the document lists (ContractTests proves they are exactly the routes served).
    static let documented: [Operation] = {
        var operations: [Operation] = []
        var path: String?
        for line in String(decoding: Documents.openAPI, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("components:") {
                path = nil
            } else if let path,
                let method = ["get", "put", "post", "delete"].first(where: { line == "    \($0):" })
            {
                operations.append(Operation(method: method.uppercased(), pattern: path))
            } else if path != nil, !operations.isEmpty, line.hasPrefix("      security:") {
                operations[operations.count - 1].credential = Credential.allCases.first {
                    line.contains("{ \($0.rawValue): [] }")
                }
            } else if path != nil, !operations.isEmpty, line.hasPrefix("      requestBody:") {
                operations[operations.count - 1].takesBody = true
            }
        }
        return operations
    }()
}

/// A request, sent with whatever credential the test chooses.
struct Call {
    var method: String
    var path: String
    var body: [UInt8]? = nil
    var headers: [String: String] = [:]

    func send(to server: TestServer, authorization: String?) throws -> Reply {
        var headers = headers
        if let authorization { headers["Authorization"] = authorization }
        return try server.request(method, path, body: body, headers: headers)
    }

    /// The same JSON object with spaces before its closing brace, `size` bytes in all.
    func padded(to size: Int) throws -> Call {
        var call = self
        let body = try #require(body)
        try #require(body.last == UInt8(ascii: "}") && body.count <= size)
        call.body =
            body.dropLast() + [UInt8](repeating: UInt8(ascii: " "), count: size - body.count) + [
                UInt8(ascii: "}")
            ]
        return call
    }
}

// MARK: Tenants

/// Two retailers and two shopper accounts, each with something to lose, and a dead credential of each kind:
/// Carol's rotated-out key and Ann's revoked laptop.
struct Tenants {
    let server: TestServer
    let alice: RetailerCredentials
    let bob: RetailerCredentials
    let retiredKey: String
    let sushi: Offer
    let pizza: Offer
    let ann: DeviceCredentials
    let annTablet: DeviceCredentials
    let revokedToken: String
    let annRedemption: Redemption
    let annLinkCode: String
    let ben: DeviceCredentials

    init() throws {
        server = try TestServer()
        alice = try server.registerRetailer("Alice")
        bob = try server.registerRetailer("Bob")
        let carol = try server.registerRetailer("Carol")
        let carolsNewKey: APIKey = try server.request("POST", "/v1/retailer/key", token: carol.apiKey).decode()
        // The new key's first use retires the old one (until then it works, for 24 h at most).
        try #require(try server.request("GET", "/v1/retailer", token: carolsNewKey.apiKey).status == 200)
        retiredKey = carol.apiKey
        sushi = try server.putOffer(
            alice, major: 1, minor: 1, OfferDraft(title: "Alice's sushi", perShopperLimit: 5))
        pizza = try server.putOffer(alice, major: 2, minor: 2, OfferDraft(title: "Alice's pizza"))
        try server.putStore(
            alice, "carnaby",
            StoreDraft(name: "Carnaby", latitude: 51.5136, longitude: -0.1365, radiusMetres: 80))
        try server.putStore(
            alice, "rivoli",
            StoreDraft(name: "Rivoli", latitude: 48.8606, longitude: 2.3376, radiusMetres: 120))

        ann = try server.createAccount()
        annTablet = try server.linkDevice(to: ann, name: "tablet")
        let laptop = try server.linkDevice(to: ann, name: "laptop")
        try #require(
            try server.request("DELETE", "/v1/devices/\(laptop.deviceID)", token: ann.deviceToken).status
                == 204)
        revokedToken = laptop.deviceToken
        let seen = SeenPush(items: [SeenItem(offerID: sushi.id, seenAt: server.clock.read())])
        try #require(
            try server.request("POST", "/v1/seen", token: ann.deviceToken, json: seen).status == 200)
        annRedemption = try server.redeem(ann, sushi.id, key: "ann-key").decode()
        annLinkCode = try server.request("POST", "/v1/link-codes", token: ann.deviceToken).decode(
            LinkCode.self
        ).code
        ben = try server.createAccount()
    }

    /// The first tenant's credential of each kind.
    func token(_ credential: Credential) -> String {
        switch credential {
        case .operatorToken: server.operatorToken
        case .retailerKey: alice.apiKey
        case .deviceToken: ann.deviceToken
        }
    }

    /// A request each operation answers with 2xx for the first tenant (the operator, Alice, Ann), aimed at
    /// that tenant's own resources; nil for an operation this table does not know yet.
    func call(_ operation: Operation) -> Call? {
        func json(_ value: some Encodable) -> [UInt8] {
            Array(try! LoyaltyJSON.encoder().encode(value))
        }
        switch operation.description {
        case "GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.yaml", "GET /v1/retailer",
            "POST /v1/retailer/key", "GET /v1/retailer/offers", "GET /v1/retailer/stats",
            "GET /v1/retailer/stores",
            "POST /v1/link-codes", "GET /v1/devices", "GET /v1/catalog", "GET /v1/seen",
            "GET /v1/redemptions":
            return Call(method: operation.method, path: operation.pattern)
        case "POST /v1/retailers":
            return Call(
                method: "POST", path: "/v1/retailers", body: json(RetailerRegistration(name: "Dora")))
        case "PUT /v1/retailer/offers/{major}/{minor}":
            return Call(
                method: "PUT", path: "/v1/retailer/offers/1/1",
                body: json(OfferDraft(title: "Alice's sushi", perShopperLimit: 5)))
        case "DELETE /v1/retailer/offers/{major}/{minor}":
            return Call(method: "DELETE", path: "/v1/retailer/offers/2/2")
        case "PUT /v1/retailer/stores/{store_id}":
            return Call(
                method: "PUT", path: "/v1/retailer/stores/carnaby",
                body: json(
                    StoreDraft(name: "Carnaby", latitude: 51.5136, longitude: -0.1365, radiusMetres: 90)))
        case "DELETE /v1/retailer/stores/{store_id}":
            return Call(method: "DELETE", path: "/v1/retailer/stores/rivoli")
        case "POST /v1/accounts":
            return Call(
                method: "POST", path: "/v1/accounts", body: json(DeviceRegistration(name: "watch")))
        case "POST /v1/devices":
            return Call(
                method: "POST", path: "/v1/devices", body: json(DeviceRegistration(code: annLinkCode)))
        case "DELETE /v1/devices/{id}":
            return Call(method: "DELETE", path: "/v1/devices/\(annTablet.deviceID)")
        case "POST /v1/seen":
            return Call(
                method: "POST", path: "/v1/seen",
                body: json(SeenPush(items: [SeenItem(offerID: sushi.id, seenAt: server.clock.read())])))
        case "POST /v1/redemptions":
            return Call(
                method: "POST", path: "/v1/redemptions", body: json(RedemptionRequest(offerID: sushi.id)),
                headers: ["Idempotency-Key": "ann-key"])
        default:
            return nil
        }
    }

    struct Attempt {
        var name: String
        var authorization: String?
        var status: Int
    }

    /// Ten ways to hold the wrong credential for an operation that needs `required`.
    func wrongCredentials(for required: Credential) -> [Attempt] {
        let valid = token(required)
        let forged =
            switch required {
            case .operatorToken: String(valid.reversed())
            case .retailerKey: Secrets.token(prefix: retailerKeyPrefix)
            case .deviceToken: Secrets.token(prefix: deviceTokenPrefix)
            }
        var attempts = [
            Attempt(name: "no Authorization header", authorization: nil, status: 401),
            Attempt(name: "an empty bearer token", authorization: "Bearer ", status: 401),
            Attempt(
                name: "the right token under another scheme", authorization: "Basic \(valid)", status: 401),
            Attempt(
                name: "the right token and one character more", authorization: "Bearer \(valid)x",
                status: 401),
            Attempt(
                name: "the right token less its last character",
                authorization: "Bearer \(valid.dropLast())", status: 401),
            Attempt(
                name: "a forged token of the right kind", authorization: "Bearer \(forged)", status: 401),
            Attempt(name: "a revoked device token", authorization: "Bearer \(revokedToken)", status: 401),
            Attempt(
                name: "a rotated-out retailer key", authorization: "Bearer \(retiredKey)", status: 401),
        ]
        for other in Credential.allCases where other != required {
            attempts.append(
                Attempt(
                    name: "a valid \(other.rawValue)", authorization: "Bearer \(token(other))", status: 403))
        }
        return attempts
    }

    /// Every string field of every request body.
    func stringFields() -> [StringField] {
        let alice = alice.apiKey
        func offer(_ before: String, _ after: String = #""}"#) -> (Tenants) throws -> BodyTemplate {
            { _ in
                BodyTemplate(
                    method: "PUT", path: "/v1/retailer/offers/3/3", token: alice, before: before, after: after
                )
            }
        }
        let readOffer: (Tenants, Reply) throws -> Offer? = { tenants, _ in
            try tenants.server.request("GET", "/v1/retailer/offers", token: alice).decode(OfferList.self)
                .offers
                .first { $0.major == 3 && $0.minor == 3 }
        }
        let readDeviceName: (Tenants, Reply) throws -> String? = { tenants, reply in
            let device: DeviceCredentials = try reply.decode()
            return try tenants.server.request("GET", "/v1/devices", token: device.deviceToken).decode(
                DeviceList.self
            )
            .devices.first(where: \.current)?.name
        }
        return [
            StringField(
                name: "retailer name", field: "name", maxLength: Validation.nameLength.upperBound,
                template: { tenants in
                    BodyTemplate(
                        method: "POST", path: "/v1/retailers", token: tenants.server.operatorToken,
                        before: #"{"name":""#,
                        after: #""}"#)
                },
                readBack: { tenants, reply in
                    let key = try reply.decode(RetailerCredentials.self).apiKey
                    return try tenants.server.request("GET", "/v1/retailer", token: key).decode(Retailer.self)
                        .name
                }),
            StringField(
                name: "offer title", field: "title", maxLength: Validation.titleLength.upperBound,
                template: offer(#"{"title":""#), readBack: { try readOffer($0, $1)?.title }),
            StringField(
                name: "offer description", field: "description", maxLength: Validation.descriptionMaxLength,
                template: offer(#"{"title":"t","description":""#),
                readBack: { try readOffer($0, $1)?.description }),
            StringField(
                name: "offer category", field: "category", maxLength: Validation.categoryMaxLength,
                template: offer(#"{"title":"t","category":""#),
                readBack: { try readOffer($0, $1)?.category }),
            StringField(
                name: "offer image URL", field: "image_url", maxLength: Validation.imageURLMaxLength,
                prefix: "https://example.com/", isFreeText: false,
                template: offer(#"{"title":"t","image_url":""#),
                readBack: { try readOffer($0, $1)?.imageURL }),
            StringField(
                name: "store name", field: "name", maxLength: Validation.nameLength.upperBound,
                template: { _ in
                    BodyTemplate(
                        method: "PUT", path: "/v1/retailer/stores/s1", token: alice, before: #"{"name":""#,
                        after: #"","latitude":1,"longitude":1,"radius_m":100}"#)
                },
                readBack: { tenants, _ in
                    try tenants.server.request("GET", "/v1/retailer/stores", token: alice).decode(
                        StoreList.self
                    ).stores
                        .first { $0.storeID == "s1" }?.name
                }),
            StringField(
                name: "first device name", field: "name", maxLength: Validation.deviceNameMaxLength,
                template: { _ in
                    BodyTemplate(
                        method: "POST", path: "/v1/accounts", token: nil, before: #"{"name":""#, after: #""}"#)
                },
                readBack: readDeviceName),
            StringField(
                name: "linked device name", field: "name", maxLength: Validation.deviceNameMaxLength,
                template: { tenants in
                    let code: LinkCode = try tenants.server.request(
                        "POST", "/v1/link-codes", token: tenants.ann.deviceToken
                    ).decode()
                    return BodyTemplate(
                        method: "POST", path: "/v1/devices", token: nil,
                        before: #"{"code":"\#(code.code)","name":""#,
                        after: #""}"#)
                },
                readBack: readDeviceName),
            StringField(
                name: "link code", field: "code", maxLength: 32, isFreeText: false,
                template: { _ in
                    BodyTemplate(
                        method: "POST", path: "/v1/devices", token: nil, before: #"{"code":""#, after: #""}"#)
                },
                readBack: { _, _ in nil }),
        ]
    }
}

/// A JSON body with a hole for one string's content (the bytes between its quotes, sent as they are).
struct BodyTemplate {
    var method: String
    var path: String
    var token: String?
    var before: String
    var after: String

    func send(to server: TestServer, content: [UInt8]) throws -> Reply {
        try server.request(
            method, path, token: token, body: Array(before.utf8) + content + Array(after.utf8))
    }
}

/// A string field of a request body: its limit, how to send it, and how to read back what was stored.
struct StringField: CustomStringConvertible {
    var name: String
    /// As the 422 answer names it.
    var field: String
    var maxLength: Int
    /// Every value sent starts with this (an image URL needs its scheme and host).
    var prefix = ""
    /// Any text is a valid value (not so for URLs and link codes).
    var isFreeText = true
    /// Makes the request (and whatever it needs first, such as a fresh link code).
    var template: (Tenants) throws -> BodyTemplate
    /// The value as stored, read with a GET after a 2xx `reply`.
    var readBack: (Tenants, Reply) throws -> String?

    var description: String { name }

    /// `value` is accepted, then read back with the same bytes (no normalisation, nothing trimmed).
    func expectStored(
        _ value: String, _ tenants: Tenants, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reply = try template(tenants).send(to: tenants.server, content: jsonStringContent(value))
        if field == "code" {
            #expect(
                reply.status == 404 && reply.errorCode == .linkCodeInvalid, "\(reply.text)",
                sourceLocation: sourceLocation)
            return
        }
        #expect(
            (200..<300).contains(reply.status), "\(name) \(value.debugDescription): \(reply.text)",
            sourceLocation: sourceLocation)
        guard (200..<300).contains(reply.status) else { return }
        let stored = try readBack(tenants, reply)
        #expect(
            stored.map { Array($0.utf8) } == Array(value.utf8), "\(name): \(stored.debugDescription)",
            sourceLocation: sourceLocation)
    }

    func expectRefused(
        _ value: String, _ tenants: Tenants, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let template = try template(tenants)
        let before = try tenants.server.rows()
        let reply = try template.send(to: tenants.server, content: jsonStringContent(value))
        #expect(
            reply.status == 422 && reply.errorField == field, "\(name): \(reply.status) \(reply.text)",
            sourceLocation: sourceLocation)
        #expect(
            try tenants.server.rows() == before, "\(name): a refused value was stored",
            sourceLocation: sourceLocation)
    }
}

/// The JSON text of a string without its quotes.
func jsonStringContent(_ text: String) -> [UInt8] {
    Array(try! LoyaltyJSON.encoder().encode(text).dropFirst().dropLast())
}

/// A secret and the forms of it that could leak: its SHA-256 (what the database keeps) in hex, as PostgreSQL
/// prints a bytea, and in base64.
func leakForms(of secret: String) -> [String] {
    let digest = Secrets.digest(of: secret)
    let hex = digest.map { String(format: "%02x", $0) }.joined()
    return [
        secret, secret.lowercased(), hex, hex.uppercased(), Data(digest).base64EncodedString(),
        Secrets.base64URL(digest),
    ]
}

// MARK: Database state and raw requests

extension TestServer {
    /// Every row of every table as JSON text, per table; with `ids`, only the rows whose text names one of
    /// them. Equal answers before and after a request prove that it wrote nothing.
    func rows(mentioning ids: [UUID]? = nil) throws -> [String: String] {
        try pool.withConnection { connection in
            let tables = try connection.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            ).map { row throws(PostgresError) in try row.decode("tablename", as: String.self) }
            var rows: [String: String] = [:]
            for table in tables {
                // The table names come from the catalog, not from input.
                let sql =
                    "SELECT coalesce(json_agg(t ORDER BY t::text), '[]')::text AS rows FROM \"\(table)\" t"
                let query =
                    if let ids {
                        PostgresQuery(
                            unsafeSQL: sql + " WHERE t::text ~* $1",
                            parameters: [ids.map(\.uuidString).joined(separator: "|")])
                    } else {
                        PostgresQuery(unsafeSQL: sql)
                    }
                rows[table] = try connection.query(query)[0].decode("rows", as: String.self)
            }
            return rows
        }
    }

    /// Sends a request over a plain socket with `target` exactly as given: a URL library would normalise
    /// `%2e%2e` or refuse bytes that this sends as they are.
    func raw(
        _ method: String, _ target: String, token: String? = nil, headerLines: [String] = [],
        body: [UInt8]? = nil
    ) throws -> Reply {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for line in headerLines { head += line + "\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let received = try exchange(Array((head + "\r\n").utf8) + (body ?? []))
        let separator = Array("\r\n\r\n".utf8)
        let end = try #require(
            received.indices.dropLast(3).first { received[$0..<$0 + 4].elementsEqual(separator) },
            "no complete response: \(String(decoding: received, as: UTF8.self))")
        let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = try #require(
            Int(lines[0].split(separator: " ").dropFirst().first ?? ""), "\(lines[0])")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Reply(status: status, headers: headers, body: Array(received[(end + 4)...]))
    }

    /// Writes `bytes` and reads until the server closes. A server that answers early and closes (414, 431)
    /// may cut the writing short; what it answered is still read.
    private func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes {
                send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { break }
            sent += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return received
    }
}
