import Digest
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// What secure beacons change for the retailer and the resolver: figures that count verified and claimed presence
/// apart, the fleet's "last heard" and TLM of a secure beacon, impossible journeys, and floods logged once.
@Suite struct SecureFleetTests {
    // MARK: Figures and the fleet

    /// A seen push backed by a verified sighting is verified; one from before the beacon was secure is claimed. The
    /// secure beacon's "last heard" is its latest verified sighting, not the later claimed push; its TLM is the
    /// latest heard (an older one sent later changes nothing), with the low-battery flag under 2,500 mV.
    @Test func figuresCountVerifiedAndClaimedApartAndTheFleetShowsVerifiedPresenceAndTLM() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let pizza = try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza"))
        let ann = try server.createAccount()
        let bob = try server.createAccount()
        try server.see(ann, sushi.id, pizza.id)  // before 1:1 was secure: claimed
        let provisioning = try server.secure(matey, 1, 1)
        server.clock.advance(by: 60)
        let heardAt = server.clock.read()
        let tlm = SightingTelemetry(batteryMillivolts: 2_910, temperature: 21.5, advertisingCount: 4_000, uptimeSeconds: 3_600.5)
        let resolved = try server.resolve(
            bob, [Sighting(eid: Hex.text(try eid(provisioning, at: heardAt)), heardAt: heardAt, tlm: tlm)])
        #expect(resolved.beacons.map(\.beacon) == ["1:1"])
        server.clock.advance(by: 60)
        try server.see(bob, sushi.id, pizza.id)

        let stats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: matey.apiKey).decode()
        let counts = stats.offers.map { "\($0.major):\($0.minor) \($0.seenBy)=\($0.verifiedBy)+\($0.claimedBy)" }
        #expect(counts == ["1:1 2=1+1", "1:2 2=0+2"])

        var fleet: BeaconFleet = try server.request("GET", "/v1/retailer/fleet", token: matey.apiKey).decode()
        let secure = try #require(fleet.beacons.first { $0.minor == 1 })
        let plain = try #require(fleet.beacons.first { $0.minor == 2 })
        #expect(secure.secure && !plain.secure && plain.telemetry == nil)
        #expect(secure.lastHeardAt == heardAt && plain.lastHeardAt == heardAt.addingTimeInterval(60))
        #expect(secure.sightings.map(\.sightings) == [1])
        #expect(
            secure.telemetry
                == BeaconTelemetry(
                    batteryMillivolts: 2_910, temperature: 21.5, advertisingCount: 4_000, uptimeSeconds: 3_600.5,
                    heardAt: heardAt))
        #expect(secure.telemetry?.lowBattery == false && secure.note == nil)

        // A lower battery heard later flags the beacon; a reading heard before the kept one changes nothing.
        server.clock.advance(by: 60)
        let now = server.clock.read()
        let current = Hex.text(try eid(provisioning, at: now))
        let low = SightingTelemetry(batteryMillivolts: 2_380, advertisingCount: 4_100)
        let stale = SightingTelemetry(batteryMillivolts: 3_000)
        _ = try server.resolve(
            bob,
            [
                Sighting(eid: current, heardAt: now, tlm: low),
                Sighting(eid: current, heardAt: heardAt.addingTimeInterval(-30), tlm: stale),
            ])
        _ = try server.resolve(ann, [Sighting(eid: current, heardAt: heardAt.addingTimeInterval(-10), tlm: stale)])
        fleet = try server.request("GET", "/v1/retailer/fleet", token: matey.apiKey).decode()
        let flagged = try #require(fleet.beacons.first { $0.minor == 1 }?.telemetry)
        #expect(flagged.batteryMillivolts == 2_380 && flagged.temperature == nil && flagged.lowBattery)
        #expect(flagged.heardAt == now)
        #expect(fleet.beacons.first { $0.minor == 1 }?.note?.contains("battery low (2380 mV") == true)
        let json = try server.request("GET", "/v1/retailer/fleet", token: matey.apiKey).text
        #expect(json.contains(#""low_battery":true"#) && json.contains(#""secure":true"#))
    }

    @Test func aSightingsTLMOutsideTheFramesRangesIs422() throws {
        let server = try TestServer()
        let ann = try server.createAccount()
        let now = server.clock.read()
        for (tlm, field) in [
            (SightingTelemetry(batteryMillivolts: 70_000), "sightings[0].tlm.battery_mv"),
            (SightingTelemetry(temperature: 300), "sightings[0].tlm.temperature"),
            (SightingTelemetry(advertisingCount: -1), "sightings[0].tlm.advertising_count"),
            (SightingTelemetry(uptimeSeconds: 5e8), "sightings[0].tlm.uptime_seconds"),
        ] {
            let batch = SightingBatch(sightings: [Sighting(eid: "0123456789abcdef", heardAt: now, tlm: tlm)])
            let reply = try server.request("POST", "/v1/sightings", token: ann.deviceToken, json: batch)
            let error = try reply.decode(APIErrorBody.self).error
            #expect(reply.status == 422 && error.field == field, "\(reply.text)")
        }
        // A sighting without tlm, as clients before it send them, still resolves (to nothing, here).
        let plain = #"{"sightings":[{"eid":"0123456789abcdef","heard_at":"\#(LoyaltyJSON.formatTimestamp(now))"}]}"#
        #expect(try server.request("POST", "/v1/sightings", token: ann.deviceToken, rawJSON: plain).status == 200)
    }

    @Test func aBeaconIsPlacedOnlyInOneOfTheRetailersOwnStores() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        _ = try server.putStore(other, "paris", StoreDraft(name: "paris", latitude: 48.8606, longitude: 2.3376, radiusMetres: 100))
        for storeID in ["paris", "nowhere"] {
            let label = BeaconLabel(name: "Till", storeID: storeID)
            let reply = try server.request("PUT", "/v1/retailer/fleet/1/1", token: matey.apiKey, json: label)
            #expect(reply.status == 422 && reply.text.contains("store_id"), "\(reply.text)")
        }
        _ = try server.putStore(matey, "london", StoreDraft(name: "london", latitude: 51.5136, longitude: -0.1365, radiusMetres: 100))
        let label = BeaconLabel(name: "Till", storeID: "london")
        #expect(try server.request("PUT", "/v1/retailer/fleet/1/1", token: matey.apiKey, json: label).status == 201)
        let fleet: BeaconFleet = try server.request("GET", "/v1/retailer/fleet", token: matey.apiKey).decode()
        #expect(fleet.beacons.map(\.storeID) == ["london"])
    }

    // MARK: Impossible journeys

    /// Verified in London, then in Manchester (262 km) ten minutes later: refused, answered as nothing, not recorded,
    /// counted in /metrics, logged once for the device however often it tries. Two hours later the same journey is
    /// possible. A beacon placed in no store moves no one.
    @Test func aSightingTooFarTooSoonIsRefusedCountedAndLoggedOnce() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        _ = try server.putStore(matey, "london", StoreDraft(name: "london", latitude: 51.5136, longitude: -0.1365, radiusMetres: 100))
        _ = try server.putStore(matey, "manchester", StoreDraft(name: "manchester", latitude: 53.4808, longitude: -2.2426, radiusMetres: 100))
        let london = try server.secure(matey, 1, 1)
        let manchester = try server.secure(matey, 2, 1)
        let unplaced = try server.secure(matey, 3, 1)
        for (major, store) in [(1, "london"), (2, "manchester")] {
            let label = BeaconLabel(name: store, storeID: store)
            #expect(try server.request("PUT", "/v1/retailer/fleet/\(major)/1", token: matey.apiKey, json: label).status == 201)
        }
        let ann = try server.createAccount()
        func sighting(_ provisioning: BeaconProvisioning) throws -> Sighting {
            let now = server.clock.read()
            return Sighting(eid: Hex.text(try eid(provisioning, at: now)), heardAt: now)
        }
        #expect(try server.resolve(ann, [try sighting(london)]).beacons.map(\.beacon) == ["1:1"])
        server.log.removeAll()
        server.clock.advance(by: 600)
        for _ in 0..<3 {
            let answer = try server.resolve(ann, [try sighting(manchester), try sighting(unplaced)])
            #expect(answer.beacons.map(\.beacon) == ["3:1"])
        }
        let recorded = try server.pool.withConnection { connection in
            try connection.query("SELECT DISTINCT major FROM verified_sightings ORDER BY major").map {
                row throws(PostgresError) in try row.decode("major", as: Int.self)
            }
        }
        #expect(recorded == [1, 3])
        let lines = server.log.recorded.filter { $0.contains(#""event":"impossible_journey""#) }
        #expect(lines.count == 1, "\(lines)")
        let line = try #require(
            try JSONSerialization.jsonObject(with: Data((lines.first ?? "{}").utf8)) as? [String: Any])
        #expect(line["beacon"] as? String == "2:1" && line["seconds"] as? Double == 600)
        #expect((line["km"] as? Double).map { (255...270).contains($0) } == true, "\(line)")
        #expect(line["device_id"] as? String != nil && line["level"] as? String == "warning")
        #expect(try refusedJourneys(server) == 3)

        server.clock.advance(by: 2 * 3600)
        #expect(try server.resolve(ann, [try sighting(manchester)]).beacons.map(\.beacon) == ["2:1"])
        #expect(try refusedJourneys(server) == 3)
    }

    @Test func theJourneyRuleAllowsTwoHundredKilometresAnHourAndTwoKilometres() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let here = JourneyRule.Visit(location: .init(latitude: 51.5, longitude: 0), heardAt: start)
        // 0.0180 degrees of latitude is about 2.0 km; 1 degree about 111.2 km.
        let nextDoor = JourneyRule.Visit(location: .init(latitude: 51.517, longitude: 0), heardAt: start)
        let degreeAway = { (seconds: Double) in
            JourneyRule.Visit(location: .init(latitude: 52.5, longitude: 0), heardAt: start.addingTimeInterval(seconds))
        }
        #expect(!JourneyRule.isImpossible(from: here, to: nextDoor).impossible)
        // 111.2 km - 2 km at 200 km/h: 1,966 s.
        #expect(JourneyRule.isImpossible(from: here, to: degreeAway(1_900)).impossible)
        #expect(!JourneyRule.isImpossible(from: here, to: degreeAway(2_000)).impossible)
        #expect(!JourneyRule.isImpossible(from: degreeAway(2_000), to: here).impossible, "either order of time")
    }

    // MARK: Floods

    /// Random identifiers sent as fast as the limit lets and beyond: nothing resolves, nothing is recorded, and the
    /// device is logged once (not once per refused request); another device is its own line.
    @Test func aFloodOfRandomIdentifiersResolvesNothingAndIsLoggedOnce() throws {
        let server = try TestServer(rateLimits: RateLimits(buckets: [.sightings: .init(burst: 5, perSecond: 0.001)]))
        let matey = try server.registerRetailer()
        _ = try server.secure(matey, 1, 1)
        let mallory = try server.createAccount()
        let tablet = try server.linkDevice(to: mallory, name: "tablet")
        server.log.removeAll()
        var statuses: [Int] = []
        for _ in 0..<20 {
            let batch = SightingBatch(
                sightings: (0..<100).map { _ in
                    Sighting(eid: Hex.text(Secrets.randomBytes(8)), heardAt: server.clock.read())
                })
            let reply = try server.request("POST", "/v1/sightings", token: mallory.deviceToken, json: batch)
            statuses.append(reply.status)
            if reply.status == 200 { #expect(reply.text == #"{"beacons":[]}"#) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 5 && statuses.filter { $0 == 429 }.count == 15)
        let batch = SightingBatch(sightings: [Sighting(eid: "0123456789abcdef", heardAt: server.clock.read())])
        for _ in 0..<7 { _ = try server.request("POST", "/v1/sightings", token: tablet.deviceToken, json: batch) }
        let floods = server.log.recorded.filter { $0.contains(#""event":"sightings_flood""#) }
        #expect(floods.count == 2, "\(floods)")
        #expect(floods.first?.contains(mallory.deviceID.uuidString.lowercased()) == true)
        #expect(floods.last?.contains(tablet.deviceID.uuidString.lowercased()) == true)
        let rows = try server.pool.withConnection { connection in
            try connection.query("SELECT count(*) AS n FROM verified_sightings")[0].decode("n", as: Int.self)
        }
        #expect(rows == 0)
        // An hour on (the limiter's own clock is real time: the bucket is still empty), a device still at it is
        // logged again: once per device per hour.
        server.clock.advance(by: 3601)
        for _ in 0..<3 { _ = try server.request("POST", "/v1/sightings", token: tablet.deviceToken, json: batch) }
        #expect(server.log.recorded.filter { $0.contains(#""event":"sightings_flood""#) }.count == 3)
    }

    // MARK: Helpers

    private func refusedJourneys(_ server: TestServer) throws -> Int {
        let text = try server.request("GET", "/metrics", token: server.operatorToken).text
        let name = #"loyalty_sightings_refused_total{reason="impossible_journey"} "#
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name) }, "no \(name)")
        return try #require(Int(line.dropFirst(name.count)))
    }
}

/// The EID `provisioning`'s beacon broadcasts at `date`, as the beacon computes it from its provisioning document.
func eid(_ provisioning: BeaconProvisioning, at date: Date) throws -> [UInt8] {
    try EddystoneEID.ephemeralID(
        identityKey: try #require(Hex.bytes(provisioning.identityKey)), exponent: provisioning.exponent,
        counter: UInt32(Int64(provisioning.counter) + Int64(date.timeIntervalSince(provisioning.counterAt))))
}

extension TestServer {
    /// Makes the retailer's beacon secure with a key the service makes.
    func secure(_ retailer: RetailerCredentials, _ major: Int, _ minor: Int) throws -> BeaconProvisioning {
        let reply = try request(
            "POST", "/v1/retailer/fleet/\(major)/\(minor)/secure", token: retailer.apiKey, json: SecureBeaconRequest())
        try #require(reply.status == 201, "\(reply.text)")
        return try reply.decode()
    }

    func resolve(_ device: DeviceCredentials, _ sightings: [Sighting]) throws -> SightingResolution {
        let reply = try request(
            "POST", "/v1/sightings", token: device.deviceToken, json: SightingBatch(sightings: sightings))
        try #require(reply.status == 200, "\(reply.text)")
        return try reply.decode()
    }
}
