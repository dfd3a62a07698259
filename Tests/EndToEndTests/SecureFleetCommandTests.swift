import Digest
import Foundation
import HTTPClient
import LoyaltyAPI
import LoyaltyTesting
import Testing

/// Through the real binaries: a beacon made secure by the Eddystone-EID key exchange (`loyalty retailer beacon
/// eid-params`, `secure --beacon-public-key`), a sighting of it with its TLM, and the fleet as `loyalty retailer
/// beacon list` shows it; the figures' verified and claimed columns.
@Suite struct SecureFleetCommandTests {
    @Test func aBeaconRegisteredByKeyExchangeShowsItsBatteryOnTheFleet() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let retailer = try server.retailer("Fleet shop \(uuid.prefix(4))", uuid: uuid)
        try retailer.setOffer(2, 2, "Sushi", [])
        let parameters = try #require(try retailer.ok(["retailer", "beacon", "eid-params", "--json"]).jsonLines.first)
        let serviceKey = try #require((parameters["service_public_key"] as? String).flatMap(Hex.bytes))
        #expect(try retailer.ok(["retailer", "beacon", "eid-params"]).stdout.contains(Hex.text(serviceKey)))

        // The beacon's side, as the spec's reference tool computes it.
        let beaconPrivateKey = [UInt8](repeating: 0x33, count: 32)
        let beaconPublicKey = try X25519.publicKey(privateKey: beaconPrivateKey)
        let identityKey = try EddystoneEID.identityKey(
            privateKey: beaconPrivateKey, peerPublicKey: serviceKey, resolverPublicKey: serviceKey,
            beaconPublicKey: beaconPublicKey)
        let start = UInt32(2_000_000)
        func eid(_ counter: UInt32) throws -> String {
            Hex.text(try EddystoneEID.ephemeralID(identityKey: identityKey, exponent: 10, counter: counter))
        }
        let exchange = ["--beacon-public-key", Hex.text(beaconPublicKey), "--counter", String(start)]
        let wrong = try retailer.run(
            ["retailer", "beacon", "secure", "2", "2", "--first-eid", try eid(start + 4096)] + exchange)
        #expect(wrong.status != 0 && wrong.stderr.contains("first_eid"), "\(wrong.stderr)")
        let half = try retailer.run(["retailer", "beacon", "secure", "2", "2", "--first-eid", try eid(start)])
        #expect(half.status == 64 && half.stderr.contains("go together"), "\(half.stderr)")
        let registered = try #require(
            try retailer.ok(
                ["retailer", "beacon", "secure", "2", "2", "--first-eid", try eid(start), "--json"] + exchange
            ).jsonLines.first)
        #expect(registered["event"] as? String == "beacon_registered" && registered["counter"] as? Int == Int(start))
        #expect(registered["identity_key"] == nil && registered["service_public_key"] as? String == Hex.text(serviceKey))

        // A shopper's device hears it with its TLM (the client that sends sightings is its own work: plain HTTP).
        let shopper = try server.newAccount()
        let token = try deviceToken(shopper)
        let heardAt = Date()
        let counter = start + UInt32(heardAt.timeIntervalSince(
            try #require((registered["counter_at"] as? String).flatMap(parseTimestamp))))
        let body = #"""
            {"sightings":[{"eid":"\#(try eid(counter))","heard_at":"\#(formatTimestamp(heardAt))","rssi":-60,
            "tlm":{"battery_mv":2400,"temperature":19.5,"advertising_count":123456,"uptime_seconds":93784.5}}]}
            """#
        let answer = try HTTPClient().send(
            HTTPClientRequest(
                method: "POST", url: server.url + "/v1/sightings",
                headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                body: Array(body.utf8)))
        #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains(#""beacon":"2:2""#))

        let lines = try retailer.ok(["retailer", "beacon", "list", "--json"]).jsonLines
        let beacon = try #require(lines.first { $0["major"] as? Int == 2 && $0["minor"] as? Int == 2 })
        #expect(beacon["event"] as? String == "beacon" && beacon["secure"] as? Bool == true)
        let telemetry = try #require(beacon["telemetry"] as? [String: Any])
        #expect(telemetry["battery_mv"] as? Int == 2400 && telemetry["low_battery"] as? Bool == true)
        #expect(telemetry["uptime_seconds"] as? Double == 93784.5 && telemetry["temperature"] as? Double == 19.5)
        let table = try retailer.ok(["retailer", "beacon", "list"]).stdout
        #expect(table.contains("BATTERY") && table.contains("2400 mV LOW") && table.contains("19.5 °C"), "\(table)")
        #expect(table.contains("1d 2h") && table.contains("battery low (2400 mV"), "\(table)")

        let stats = try retailer.ok(["retailer", "stats"]).stdout
        #expect(stats.contains("VERIFIED") && stats.contains("CLAIMED"), "\(stats)")
    }

    private func deviceToken(_ device: StoryDevice) throws -> String {
        let files = FileManager.default.enumerator(at: device.home, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent == "device.json" } ?? []
        let text = try String(contentsOf: try #require(files.first), encoding: .utf8)
        let range = try #require(text.range(of: #"ld_[A-Za-z0-9_-]+"#, options: .regularExpression))
        return String(text[range])
    }

    private func formatTimestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }

    private func parseTimestamp(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }
}
