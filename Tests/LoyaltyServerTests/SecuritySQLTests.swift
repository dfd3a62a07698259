import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Security: SQL metacharacters in every string field, query parameter and path segment, as
/// listed by openapi.yaml's operations (SecurityOperations.swift); "nothing changed" is proven from the database rows.
@Suite struct SecuritySQLTests {
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
            var readingKeys: Set<String> = []
            for payload in Self.sqlPayloads {
                let value = field.prefix + payload
                // A retailer's name that reads as one registered before is refused: `"` reads as `''` (UTS #39).
                if field.isFolded, !readingKeys.insert(RetailerName.readingKey(value)).inserted {
                    let reply = try field.template(tenants).send(to: server, content: jsonStringContent(value))
                    #expect(reply.status == 409 && reply.errorCode == .nameTaken, "\(payload): \(reply.text)")
                    continue
                }
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
                } else if payload.contains(where: { " \"\\`%".contains($0) }) {
                    // Not a URI character (RFC 3986), or a % that encodes no byte.
                    try field.expectRefused(value, tenants)
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
        try server.see(tenants.ben, generous.id, other.id)
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
}
