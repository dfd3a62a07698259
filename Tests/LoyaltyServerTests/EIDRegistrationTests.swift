import Digest
import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// The Eddystone-EID spec's key exchange: the beacon makes its identity key from its own X25519 key pair and the
/// service's public key; the service derives the same key and accepts the beacon only when its first EID matches.
@Suite struct EIDRegistrationTests {
    /// A beacon's side of the exchange, as the spec's reference tool computes it.
    struct Beacon {
        let privateKey: [UInt8]
        let publicKey: [UInt8]
        let identityKey: [UInt8]

        init(privateKey: [UInt8], servicePublicKey: [UInt8]) throws {
            self.privateKey = privateKey
            publicKey = try X25519.publicKey(privateKey: privateKey)
            identityKey = try EddystoneEID.identityKey(
                privateKey: privateKey, peerPublicKey: servicePublicKey, resolverPublicKey: servicePublicKey,
                beaconPublicKey: publicKey)
        }

        func eid(exponent: UInt8 = 10, counter: UInt32) throws -> String {
            Hex.text(try EddystoneEID.ephemeralID(identityKey: identityKey, exponent: exponent, counter: counter))
        }
    }

    private func servicePublicKey(_ server: TestServer, _ retailer: RetailerCredentials) throws -> [UInt8] {
        let parameters: EIDParameters = try server.request("GET", "/v1/retailer/eid-params", token: retailer.apiKey)
            .decode()
        #expect(parameters.minExponent == 0 && parameters.maxExponent == 15)
        return try #require(Hex.bytes(parameters.servicePublicKey))
    }

    /// The service's key is the retailer's own and stable; registering with the beacon's first EID makes the beacon
    /// secure without a key in the answer, and its later EIDs resolve.
    @Test func aBeaconRegisteredByKeyExchangeResolves() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        let serviceKey = try servicePublicKey(server, matey)
        #expect(try servicePublicKey(server, matey) == serviceKey)
        #expect(try servicePublicKey(server, other) != serviceKey)
        let beacon = try Beacon(privateKey: Array(repeating: 0x5A, count: 32), servicePublicKey: serviceKey)
        let request = EIDRegistrationRequest(
            beaconPublicKey: Hex.text(beacon.publicKey), servicePublicKey: Hex.text(serviceKey),
            firstEID: try beacon.eid(exponent: 8, counter: 1_000_000), counter: 1_000_000, exponent: 8)
        let reply = try server.request(
            "POST", "/v1/retailer/fleet/1/1/eid-registration", token: matey.apiKey, json: request)
        try #require(reply.status == 201, "\(reply.text)")
        let registration: EIDRegistration = try reply.decode()
        #expect(registration.counter == 1_000_000 && registration.counterAt == server.clock.read())
        #expect(registration.exponent == 8 && registration.form == .eddystone && registration.uuid == matey.uuid)
        #expect(registration.servicePublicKey == Hex.text(serviceKey))
        #expect(!reply.text.contains(Hex.text(beacon.identityKey)))
        for (table, text) in try server.rows() {
            #expect(!text.contains(Hex.text(beacon.identityKey)), "\(table) holds the identity key")
        }

        server.clock.advance(by: 600)
        let ann = try server.createAccount()
        let now = server.clock.read()
        let answer = try server.resolve(ann, [Sighting(eid: try beacon.eid(exponent: 8, counter: 1_000_600), heardAt: now)])
        #expect(answer.beacons.map(\.beacon) == ["1:1"] && answer.beacons.first?.retailerID == matey.id)
    }

    /// Each refusal names its field and stores nothing: a first EID of another counter or K, another retailer's
    /// service key, a public key whose shared secret is zero, and malformed hex.
    @Test func aKeyExchangeThatDoesNotMatchIsRefusedAndStoresNothing() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        let serviceKey = try servicePublicKey(server, matey)
        let beacon = try Beacon(privateKey: Array(repeating: 0x21, count: 32), servicePublicKey: serviceKey)
        let othersKey = Hex.text(try servicePublicKey(server, other))
        let good = EIDRegistrationRequest(
            beaconPublicKey: Hex.text(beacon.publicKey), servicePublicKey: Hex.text(serviceKey),
            firstEID: try beacon.eid(counter: 65_280), counter: 65_280)
        var laterCounter = good
        laterCounter.counter = 65_280 + 1024
        var otherExponent = good
        otherExponent.exponent = 9
        var othersServiceKey = good
        othersServiceKey.servicePublicKey = othersKey
        var zeroKey = good
        zeroKey.beaconPublicKey = String(repeating: "0", count: 64)
        var shortEID = good
        shortEID.firstEID = "abcd"
        for (request, field) in [
            (laterCounter, "first_eid"), (otherExponent, "first_eid"), (othersServiceKey, "service_public_key"),
            (zeroKey, "beacon_public_key"), (shortEID, "first_eid"),
        ] {
            let reply = try server.request(
                "POST", "/v1/retailer/fleet/1/1/eid-registration", token: matey.apiKey, json: request)
            let error = try reply.decode(APIErrorBody.self).error
            #expect(reply.status == 422 && error.field == field, "\(reply.text)")
        }
        let stored = try server.pool.withConnection { connection in
            try connection.query("SELECT count(*) AS n FROM secure_beacons")[0].decode("n", as: Int.self)
        }
        #expect(stored == 0)
        let reply = try server.request(
            "POST", "/v1/retailer/fleet/1/1/eid-registration", token: matey.apiKey, json: good)
        #expect(reply.status == 201, "\(reply.text)")
    }
}
