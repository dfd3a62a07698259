import Digest
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

// MARK: Operations

/// The credential an operation needs, named as openapi.yaml's security schemes.
enum Credential: String, CaseIterable {
    case operatorToken, retailerKey, deviceToken, tillKey
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
    /// Deleting the caller's account: every later request with its token is refused.
    var deletesAccount: Bool { method == "DELETE" && pattern == "/v1/account" }
    /// Retiring the credential the other operations use: these go last.
    var retiresCredential: Bool { rotatesKey || deletesAccount }

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

    func send(to server: TestServer, authorization: String?) throws -> TestResponse {
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
    /// Alice's till, and a till key of hers to revoke (the table's DELETE), and one revoked before.
    let aliceTill: TillKeyCredentials
    let spareTill: TillKeyCredentials
    let revokedTillKey: String

    init(_ transport: Transport = .inProcess) throws {
        server = try TestServer(transport)
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
        // Ann's preferences: Ben's requests must leave them as they are.
        try #require(
            try server.request(
                "PUT", "/v1/preferences", token: ann.deviceToken,
                json: PreferenceSettings(quietHours: "22:00-07:00", offersPerHour: 3, offersPerDay: 9)
            ).status == 200)
        try #require(
            try server.request("PUT", "/v1/preferences/muted-retailers/\(bob.id)", token: ann.deviceToken).status == 200)
        ben = try server.createAccount()
        aliceTill = try server.createTillKey(alice, name: "Alice's till")
        spareTill = try server.createTillKey(alice, name: "Spare till")
        let oldTill = try server.createTillKey(alice, name: "Old till")
        try #require(
            try server.request("DELETE", "/v1/retailer/till-keys/\(oldTill.id)", token: alice.apiKey).status == 204)
        revokedTillKey = oldTill.tillKey
    }

    /// Alice signed in to the console just now: her session cookie and CSRF token as request headers.
    func consoleHeaders() -> [String: String] {
        let reply = try! server.request(
            "POST", "/v1/console/session", json: ConsoleSignIn(apiKey: alice.apiKey))
        let session = try! reply.decode(ConsoleSession.self)
        let cookie = reply.headers["set-cookie"]!.split(separator: ";")[0]
        return ["Cookie": String(cookie), "X-CSRF-Token": session.csrfToken]
    }

    /// The first tenant's credential of each kind.
    func token(_ credential: Credential) -> String {
        switch credential {
        case .operatorToken: server.operatorToken
        case .retailerKey: alice.apiKey
        case .deviceToken: ann.deviceToken
        case .tillKey: aliceTill.tillKey
        }
    }

    /// What a beacon that made its identity key from Alice's service public key registers with: its first EID at the
    /// spec's starting counter.
    func alicesEIDRegistration() -> EIDRegistrationRequest {
        let beaconPrivateKey = [UInt8](repeating: 0x42, count: 32)
        let beaconPublicKey = try! X25519.publicKey(privateKey: beaconPrivateKey)
        let servicePublicKey = try! server.beaconKeyring.exchangePublicKey(retailerID: alice.id)
        let identityKey = try! EddystoneEID.identityKey(
            privateKey: beaconPrivateKey, peerPublicKey: servicePublicKey, resolverPublicKey: servicePublicKey,
            beaconPublicKey: beaconPublicKey)
        let eid = try! EddystoneEID.ephemeralID(identityKey: identityKey, exponent: 10, counter: 65_280)
        return EIDRegistrationRequest(
            beaconPublicKey: Hex.text(beaconPublicKey), servicePublicKey: Hex.text(servicePublicKey),
            firstEID: Hex.text(eid), counter: 65_280)
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
            "POST /v1/link-codes", "GET /v1/devices", "GET /v1/catalog", "GET /v1/directory", "GET /v1/seen",
            "GET /v1/redemptions", "GET /v1/retailer/offers/export", "GET /v1/retailer/figures",
            "GET /v1/retailer/beacons", "GET /v1/retailer/fleet", "GET /v1/retailer/till-keys", "GET /console/",
            "GET /v1/account/export", "GET /v1/account/export/seen", "GET /v1/account/export/sightings",
            "DELETE /v1/account", "GET /v1/preferences":
            return Call(method: operation.method, path: operation.pattern)
        case "GET /console/{file}":
            return Call(method: "GET", path: "/console/console.js")
        case "POST /v1/retailer/offers/import":
            return Call(
                method: "POST", path: operation.pattern, body: Array("major,minor,title\n1,1,Alice's sushi\n".utf8))
        case "POST /v1/retailer/till-keys":
            return Call(method: "POST", path: operation.pattern, body: json(TillKeyDraft(name: "Back till")))
        case "POST /v1/sightings":
            let sighting = Sighting(eid: "0123456789abcdef", heardAt: server.clock.read(), rssi: -60)
            return Call(method: "POST", path: operation.pattern, body: json(SightingBatch(sightings: [sighting])))
        case "POST /v1/retailer/fleet/{major}/{minor}/secure":
            // A beacon with no offer: the sushi offer's seen pushes and redemptions stay free of the presence gate.
            return Call(method: "POST", path: "/v1/retailer/fleet/3/3/secure", body: json(SecureBeaconRequest()))
        case "GET /v1/retailer/eid-params":
            return Call(method: "GET", path: operation.pattern)
        case "POST /v1/retailer/fleet/{major}/{minor}/eid-registration":
            // A beacon that made its key by exchange with Alice's service key; no offer on it, as for /secure.
            return Call(
                method: "POST", path: "/v1/retailer/fleet/4/4/eid-registration", body: json(alicesEIDRegistration()))
        case "DELETE /v1/retailer/till-keys/{id}":
            return Call(method: "DELETE", path: "/v1/retailer/till-keys/\(spareTill.id)")
        case "POST /v1/till/check", "POST /v1/till/accept":
            return Call(
                method: "POST", path: operation.pattern, body: json(TillCodeRequest(code: annRedemption.code)))
        case "POST /v1/console/session":
            return Call(method: "POST", path: operation.pattern, body: json(ConsoleSignIn(apiKey: alice.apiKey)))
        case "GET /v1/console/session", "DELETE /v1/console/session":
            return Call(method: operation.method, path: operation.pattern, headers: consoleHeaders())
        case "POST /v1/retailers":
            return Call(
                method: "POST", path: "/v1/retailers", body: json(RetailerRegistration(name: "Dora")))
        case "PUT /v1/retailer/offers/{major}/{minor}":
            return Call(
                method: "PUT", path: "/v1/retailer/offers/1/1",
                body: json(OfferDraft(title: "Alice's sushi", perShopperLimit: 5)))
        case "PUT /v1/retailer/fleet/{major}/{minor}":
            return Call(
                method: "PUT", path: "/v1/retailer/fleet/1/1",
                body: json(BeaconLabel(name: "Sushi counter", placement: "above the till")))
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
        case "PUT /v1/preferences":
            return Call(
                method: "PUT", path: operation.pattern,
                body: json(PreferenceSettings(quietHours: "21:00-08:00", offersPerHour: 4, offersPerDay: 10)))
        case "PUT /v1/preferences/muted-retailers/{retailer_id}", "DELETE /v1/preferences/muted-retailers/{retailer_id}":
            return Call(method: operation.method, path: "/v1/preferences/muted-retailers/\(bob.id)")
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
            case .tillKey: Secrets.token(prefix: tillKeyPrefix)
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
            Attempt(name: "a revoked till key", authorization: "Bearer \(revokedTillKey)", status: 401),
        ]
        for other in Credential.allCases where other != required {
            attempts.append(
                Attempt(
                    name: "a valid \(other.rawValue)", authorization: "Bearer \(token(other))", status: 403))
        }
        return attempts
    }
}
