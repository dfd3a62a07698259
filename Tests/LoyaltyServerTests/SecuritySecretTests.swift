import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Security: no secret, nor the digest the database keeps of it, in a log line, an error answer
/// or the metrics.
@Suite struct SecuritySecretTests {
    /// A whole session, failures included: no token, key, link code or redemption code, nor the digest the
    /// database keeps of it, appears in a log line, an error answer or the metrics. (PostgresTests proves
    /// that connection errors never show the conninfo's password.)
    @Test(arguments: Transport.allCases) func secretsNeverAppearInLogsOrErrorAnswers(_ transport: Transport) throws {
        let server = try TestServer(transport)
        var replies: [TestResponse] = []
        func send(
            _ method: String, _ path: String, token: String? = nil, json: (any Encodable)? = nil,
            headers: [String: String] = [:]
        ) throws -> TestResponse {
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
        _ = try send(
            "POST", "/v1/seen", token: phone.deviceToken,
            json: SeenPush(items: [SeenItem(offerID: offer.id, seenAt: server.clock.read())]))
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
        let metrics = try send("GET", "/metrics", token: server.operatorToken).text

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
