import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Security: every protected operation with every wrong credential, and each tenant against
/// the other's resources. Driven by openapi.yaml's list of operations (SecurityOperations.swift), so a new route
/// cannot be left out; "nothing changed" is proven from the database rows themselves.
@Suite struct SecurityCredentialTests {
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
                "DELETE /v1/console/session", "GET /console/", "GET /console/{file}", "GET /healthz",
                "GET /openapi.yaml", "GET /readyz", "GET /v1/console/session", "POST /v1/accounts",
                "POST /v1/console/session", "POST /v1/devices",
            ], "the console's session routes take its cookie, which this table's credentials are not")
    }

    /// Every protected operation, called with each wrong credential: 401 for none, malformed, forged, revoked
    /// or rotated-out ones, 403 for a valid one of another kind; and not one row written by any of them.
    @Test(arguments: Transport.allCases)
    func everyProtectedOperationRefusesEveryWrongCredential(_ transport: Transport) throws {
        let tenants = try Tenants(transport)
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
                    // RFC 6750 section 3: a realm always; invalid_token when a token came and is no good.
                    let sentToken = attempt.authorization.map { $0.hasPrefix("Bearer ") && $0.count > 7 } ?? false
                    let challenge = #"Bearer realm="loyalty""# + (sentToken ? #", error="invalid_token""# : "")
                    #expect(
                        reply.errorCode == .unauthorized && reply.headers["www-authenticate"] == challenge,
                        "\(context): \(reply.headers["www-authenticate"] ?? "no WWW-Authenticate")")
                } else {
                    #expect(reply.errorCode == .forbidden, "\(context)")
                }
            }
        }
        #expect(protected.count == 43 && attempts == 43 * 12)
        #expect(try server.rows() == before, "a refused request wrote to the database")

        // The same requests with the right credential succeed, so the refusals above were about the
        // credential and nothing else. Rotating the key goes last: it retires the key the others use.
        for operation in Operation.documented.sorted(by: { !$0.retiresCredential && $1.retiresCredential }) {
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
        #expect(operations.count == 21)
        for operation in operations {
            let reply = try #require(tenants.call(operation)).send(
                to: server, authorization: "Bearer \(tenants.bob.apiKey)")
            let context = "\(operation): \(reply.status) \(reply.text)"
            switch operation.description {
            case let operation where operation.hasPrefix("DELETE "): #expect(reply.status == 404, "\(context)")
            case "POST /v1/retailer/fleet/{major}/{minor}/eid-registration":
                // The beacon was given Alice's service key: Bob's derivation cannot match it.
                #expect(reply.status == 422 && reply.text.contains("service_public_key"), "\(context)")
            case let operation
            where operation.hasPrefix("PUT ") || operation == "POST /v1/retailer/till-keys"
                || operation == "POST /v1/retailer/fleet/{major}/{minor}/secure":
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

    /// Ben's device token on every shopper operation, aimed at Ann's devices, seen set, redemptions and preferences.
    @Test func aDeviceTokenReachesOnlyItsOwnAccount() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let before = try server.rows(mentioning: [tenants.ann.accountID])
        let operations = Operation.documented.filter { $0.credential == .deviceToken }
            .sorted { !$0.deletesAccount && $1.deletesAccount }
        #expect(operations.count == 18)
        let annsSecrets = [
            tenants.ann.accountID.uuidString, tenants.ann.deviceID.uuidString,
            tenants.annTablet.deviceID.uuidString,
            tenants.annRedemption.id.uuidString, tenants.annRedemption.code,
        ]
        for operation in operations {
            let reply = try #require(tenants.call(operation))
                .send(to: server, authorization: "Bearer \(tenants.ben.deviceToken)")
            let context = "\(operation): \(reply.status) \(reply.text)"
            if operation.deletesAccount {
                #expect(reply.status == 200, "Ben deletes his own account: \(context)")
            } else if operation.method == "DELETE", !operation.pattern.hasPrefix("/v1/preferences/") {
                // Unmuting is Ben's own preference (idempotent), whoever else muted the retailer.
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
}
