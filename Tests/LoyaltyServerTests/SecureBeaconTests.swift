import Digest
import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

@Suite struct SecureBeaconTests {
    func secure(
        _ server: TestServer, _ retailer: RetailerCredentials, _ major: Int, _ minor: Int,
        _ body: SecureBeaconRequest = SecureBeaconRequest()
    ) throws -> BeaconProvisioning {
        let reply = try server.request(
            "POST", "/v1/retailer/fleet/\(major)/\(minor)/secure", token: retailer.apiKey, json: body)
        try #require(reply.status == 201, "\(reply.text)")
        return try reply.decode()
    }

    /// The provisioning document holds what a beacon needs, once: a new key at every call; the defaults are K 10
    /// and Eddystone; the counter is the stated one at a whole second.
    @Test func provisioningAnswersTheDocumentOnceAndANewKeyEachTime() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let first = try secure(server, matey, 1, 1)
        #expect(first.major == 1 && first.minor == 1 && first.exponent == 10 && first.form == .eddystone)
        #expect(first.uuid == matey.uuid && first.counter == 65_280 && first.counterAt == server.clock.read())
        #expect(Hex.bytes(first.identityKey)?.count == 16 && first.identityKey == first.identityKey.lowercased())
        let second = try secure(server, matey, 1, 1, SecureBeaconRequest(exponent: 4, form: .ibeacon))
        #expect(second.identityKey != first.identityKey && second.exponent == 4 && second.form == .ibeacon)
        let reply = try server.request("POST", "/v1/retailer/fleet/1/1/secure", token: matey.apiKey)
        #expect(reply.status == 201 && reply.headers["cache-control"] == "no-store")
        let keys = try server.pool.withConnection { connection in
            try connection.query("SELECT count(*) AS n FROM secure_beacons")[0].decode("n", as: Int.self)
        }
        #expect(keys == 1)
        for (body, field) in [("{\"exponent\":16}", "exponent"), ("{\"form\":\"altbeacon\"}", "form")] {
            let refused = try server.request(
                "POST", "/v1/retailer/fleet/1/1/secure", body: Array(body.utf8),
                headers: ["Authorization": "Bearer \(matey.apiKey)"])
            #expect([400, 422].contains(refused.status) && refused.text.contains(field), "\(refused.text)")
        }
    }

    /// The database holds the identity key only sealed: neither its hex nor its bytes are in any row, and the row
    /// opens to it with the server key alone, bound to its beacon.
    @Test func theIdentityKeyIsSealedAtRest() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let provisioning = try secure(server, matey, 1, 2)
        let key = try #require(Hex.bytes(provisioning.identityKey))
        for (table, text) in try server.rows() {
            #expect(!text.contains(provisioning.identityKey), "\(table) holds the identity key")
        }
        let row = try server.pool.withConnection { connection in
            try connection.query("SELECT key_id, sealed_key FROM secure_beacons")[0]
        }
        let sealed: [UInt8] = try row.decode("sealed_key")
        #expect(sealed.count == 12 + 16 + 16)
        #expect(!(0...(sealed.count - 16)).contains { Array(sealed[$0..<$0 + 16]) == key })
        let keyID: String = try row.decode("key_id")
        #expect(keyID == server.beaconKeyring.current.id)
        let binding = SecureBeacon.binding(retailerID: matey.id, major: 1, minor: 2)
        #expect(try server.beaconKeyring.open(sealed, keyID: keyID, binding: binding) == key)
        #expect(throws: CryptoError.authenticationFailed) {
            try server.beaconKeyring.open(
                sealed, keyID: keyID, binding: SecureBeacon.binding(retailerID: matey.id, major: 1, minor: 3))
        }
    }

    /// Rotating the server key: with the new key first and the old below it, a start seals every identity key anew
    /// under the new one; a key file that lacks a row's key refuses to start.
    @Test func aNewServerKeyResealsAtStartAndAMissingOneRefuses() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let provisioning = try secure(server, matey, 1, 1)
        let oldKey = Hex.text(server.beaconKeyring.current.bytes)
        let newFile = BeaconKeyring.newFileText()
        let rotated = try BeaconKeyring(fileText: newFile + oldKey + "\n")
        #expect(try server.database.resealBeaconKeys(keyring: rotated) == 1)
        #expect(try server.database.resealBeaconKeys(keyring: rotated) == 0)
        let row = try server.pool.withConnection { connection in
            try connection.query("SELECT key_id, sealed_key FROM secure_beacons")[0]
        }
        #expect(try row.decode("key_id", as: String.self) == rotated.current.id)
        let binding = SecureBeacon.binding(retailerID: matey.id, major: 1, minor: 1)
        #expect(
            try rotated.open(try row.decode("sealed_key"), keyID: rotated.current.id, binding: binding)
                == Hex.bytes(provisioning.identityKey))
        #expect(throws: BeaconKeyring.FileError.self) {
            try server.database.resealBeaconKeys(keyring: .random())
        }
    }

    @Test func aKeyFileIsKeysOfSixtyFourHexDigits() throws {
        #expect(throws: BeaconKeyring.FileError.self) { try BeaconKeyring(fileText: "# nothing\n\n") }
        #expect(throws: BeaconKeyring.FileError.self) { try BeaconKeyring(fileText: String(repeating: "a", count: 62)) }
        let keyring = try BeaconKeyring(fileText: BeaconKeyring.newFileText())
        #expect(keyring.keys.count == 1 && keyring.current.id.count == 8)
    }

    // MARK: Resolution

    /// The EID `provisioning`'s beacon broadcasts at `date`, `windows` windows later (earlier when negative), as
    /// the beacon computes it from its provisioning document.
    func eid(_ provisioning: BeaconProvisioning, at date: Date, windows: Int = 0) throws -> [UInt8] {
        let counter =
            Int64(provisioning.counter) + Int64(date.timeIntervalSince(provisioning.counterAt))
            + Int64(windows) << provisioning.exponent
        return try EddystoneEID.ephemeralID(
            identityKey: try #require(Hex.bytes(provisioning.identityKey)), exponent: provisioning.exponent,
            counter: UInt32(counter))
    }

    func resolve(
        _ server: TestServer, _ device: DeviceCredentials, _ sightings: [Sighting]
    ) throws -> TestResponse {
        let reply = try server.request(
            "POST", "/v1/sightings", token: device.deviceToken, json: SightingBatch(sightings: sightings))
        try #require(reply.status == 200, "\(reply.text)")
        return reply
    }

    private func sightingRows(_ server: TestServer) throws -> [String] {
        try server.pool.withConnection { connection in
            try connection.query(
                "SELECT major, minor, window_counter FROM verified_sightings ORDER BY window_counter"
            ).map { row throws(PostgresError) in
                "\(try row.decode("major", as: Int.self)):\(try row.decode("minor", as: Int.self))@"
                    + "\(try row.decode("window_counter", as: Int.self))"
            }
        }
    }

    /// The current window's EID resolves (and the windows either side, for a drifting clock) and is recorded; one
    /// three windows old does not, nor the current one heard two windows ago, nor a resolved one replayed three
    /// windows later.
    @Test func theCurrentWindowResolvesAndAnOldCaptureDoesNot() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let provisioning = try secure(server, matey, 1, 1)
        let ann = try server.createAccount()
        server.clock.advance(by: 100)
        let now = server.clock.read()
        let current = Hex.text(try eid(provisioning, at: now))
        let answer: SightingResolution = try resolve(
            server, ann, [Sighting(eid: "00000000000000ff", heardAt: now), Sighting(eid: current, heardAt: now, rssi: -58)]
        ).decode()
        // Counter 65,380 is in the window of 2^10 that starts at 64,512 and ends at 65,536: 256 s after provisioning.
        #expect(
            answer.beacons == [
                ResolvedBeacon(
                    index: 1, retailerID: matey.id, retailerName: matey.name, major: 1, minor: 1,
                    validUntil: provisioning.counterAt.addingTimeInterval(256))
            ])
        #expect(answer.beacons.first?.beacon == "1:1")
        #expect(try sightingRows(server) == ["1:1@64512"])
        for windows in [-1, 1] {
            let drifted: SightingResolution = try resolve(
                server, ann, [Sighting(eid: Hex.text(try eid(provisioning, at: now, windows: windows)), heardAt: now)]
            ).decode()
            #expect(drifted.beacons.count == 1, "a clock \(windows) window off")
        }
        let stale = [
            Sighting(eid: Hex.text(try eid(provisioning, at: now, windows: -3)), heardAt: now),
            Sighting(eid: current, heardAt: now.addingTimeInterval(-2048)),
            Sighting(eid: current, heardAt: now.addingTimeInterval(2048)),
        ]
        #expect(try resolve(server, ann, stale).text == #"{"beacons":[]}"#)
        server.clock.advance(by: 3 * 1024)
        let replayed = [Sighting(eid: current, heardAt: server.clock.read())]
        #expect(try resolve(server, ann, replayed).text == #"{"beacons":[]}"#)
        #expect(try sightingRows(server) == ["1:1@63488", "1:1@64512", "1:1@65536"])
    }

    /// The iBeacon form: the EID's first 4 bytes as major and minor under the retailer's own UUID; the same numbers
    /// under another retailer's UUID are nobody's.
    @Test func theRotatingIBeaconResolvesUnderTheRetailersUUIDOnly() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        let provisioning = try secure(server, matey, 2, 1, SecureBeaconRequest(exponent: 4, form: .ibeacon))
        let ann = try server.createAccount()
        let now = server.clock.read()
        let bytes = try eid(provisioning, at: now)
        let major = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let minor = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let answer: SightingResolution = try resolve(
            server, ann, [Sighting(uuid: matey.uuid, major: major, minor: minor, heardAt: now)]
        ).decode()
        #expect(answer.beacons.map(\.beacon) == ["2:1"] && answer.beacons.first?.retailerID == matey.id)
        let elsewhere = [
            Sighting(uuid: other.uuid, major: major, minor: minor, heardAt: now),
            Sighting(eid: Hex.text(bytes), heardAt: now),
        ]
        #expect(try resolve(server, ann, elsewhere).text == #"{"beacons":[]}"#)
    }

    /// Another retailer's beacon resolves for a device that heard it in its window, as the spec's resolver does; out
    /// of its window it answers exactly as an identifier nobody ever broadcast, and records nothing.
    @Test func aForeignBeaconOutOfItsWindowAnswersAsAnUnknownOne() throws {
        let server = try TestServer()
        _ = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        let theirs = try secure(server, other, 7, 7)
        let ann = try server.createAccount()
        let now = server.clock.read()
        let heard: SightingResolution = try resolve(
            server, ann, [Sighting(eid: Hex.text(try eid(theirs, at: now)), heardAt: now)]
        ).decode()
        #expect(heard.beacons.map(\.retailerName) == ["Other"])
        let old = try resolve(server, ann, [Sighting(eid: Hex.text(try eid(theirs, at: now, windows: -3)), heardAt: now)])
        let unknown = try resolve(server, ann, [Sighting(eid: "0123456789abcdef", heardAt: now)])
        #expect(old.body == unknown.body && old.status == unknown.status && old.text == #"{"beacons":[]}"#)
        #expect(try sightingRows(server).count == 1)
    }

    /// Each device has its own bucket: one at the limit is 429, another device of the same account is not.
    @Test func sightingsAreRateLimitedPerDevice() throws {
        let server = try TestServer(rateLimits: RateLimits(buckets: [.sightings: .init(burst: 2, perSecond: 0.001)]))
        let ann = try server.createAccount()
        let tablet = try server.linkDevice(to: ann, name: "tablet")
        let batch = SightingBatch(sightings: [Sighting(eid: "0123456789abcdef", heardAt: server.clock.read())])
        for expected in [200, 200, 429] {
            #expect(try server.request("POST", "/v1/sightings", token: ann.deviceToken, json: batch).status == expected)
        }
        #expect(try server.request("POST", "/v1/sightings", token: tablet.deviceToken, json: batch).status == 200)
    }

    @Test func aBatchIsOneToAHundredSightingsOfOneForm() throws {
        let server = try TestServer()
        let ann = try server.createAccount()
        let now = server.clock.read()
        let uuid = UUID()
        var both = Sighting(eid: "0123456789abcdef", heardAt: now)
        both.uuid = uuid
        var half = Sighting(uuid: uuid, major: 1, minor: 1, heardAt: now)
        half.minor = nil
        for (sightings, field) in [
            ([Sighting](), "sightings"),
            (Array(repeating: Sighting(eid: "0123456789abcdef", heardAt: now), count: 101), "sightings"),
            ([Sighting(eid: "0123456789abcdeg", heardAt: now)], "sightings[0].eid"),
            ([Sighting(eid: "0123456789abcd", heardAt: now)], "sightings[0].eid"),
            ([both], "sightings[0]"), ([half], "sightings[0]"),
            ([Sighting(eid: "0123456789abcdef", heardAt: now, rssi: 40)], "sightings[0].rssi"),
        ] {
            let reply = try server.request(
                "POST", "/v1/sightings", token: ann.deviceToken, json: SightingBatch(sightings: sightings))
            let error = try reply.decode(APIErrorBody.self).error
            #expect(reply.status == 422 && error.field == field, "\(reply.text)")
        }
    }

    // MARK: Presence

    /// An offer on a secure beacon is seen and redeemed only after a verified sighting of it in the last 30 minutes:
    /// before, and again after that, 409 presence_not_verified saying what to do; an offer on a plain beacon in the
    /// same push as ever.
    @Test func aPresenceOfferNeedsARecentVerifiedSighting() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi", perShopperLimit: 5))
        let pizza = try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza"))
        let provisioning = try secure(server, matey, 1, 1)
        let ann = try server.createAccount()

        func seen(_ offers: Offer...) throws -> TestResponse {
            let push = SeenPush(items: offers.map { SeenItem(offerID: $0.id, seenAt: server.clock.read()) })
            return try server.request("POST", "/v1/seen", token: ann.deviceToken, json: push)
        }
        func expectRefused(_ reply: TestResponse) throws {
            #expect(reply.status == 409, "\(reply.text)")
            let error = try reply.decode(APIErrorBody.self).error
            #expect(error.code == .presenceNotVerified && error.message.contains("1:1"))
            #expect(error.message.contains("scan near the beacon") && error.message.contains("30 minutes"))
        }
        try expectRefused(try seen(pizza, sushi))
        let page: SeenPage = try server.request("GET", "/v1/seen", token: ann.deviceToken).decode()
        #expect(page.items.isEmpty, "a refused push adds nothing, not even its plain offers")
        try expectRefused(try server.redeem(ann, sushi.id))
        #expect(try seen(pizza).status == 200)
        #expect(try server.redeem(ann, pizza.id).status == 201)

        let now = server.clock.read()
        _ = try resolve(server, ann, [Sighting(eid: Hex.text(try eid(provisioning, at: now)), heardAt: now)])
        let added: SeenPushResult = try seen(sushi).decode()
        #expect(added.added == 1)
        #expect(try server.redeem(ann, sushi.id).status == 201)

        server.clock.advance(by: 31 * 60)
        try expectRefused(try server.redeem(ann, sushi.id))
        let other = try server.createAccount()
        let push = SeenPush(items: [SeenItem(offerID: sushi.id, seenAt: server.clock.read())])
        try expectRefused(try server.request("POST", "/v1/seen", token: other.deviceToken, json: push))
    }
}

