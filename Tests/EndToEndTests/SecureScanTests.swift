import Digest
import Foundation
import LoyaltyTesting
import Testing

/// Issue 43 item 5 through the real binaries: `loyalty scan` resolves a secure beacon's identities through
/// `loyalty-server` (PostgreSQL behind it), and shows its presence offer only for identities the service resolved.
@Suite struct SecureScanTests {
    /// A retailer with a presence offer on a secure beacon 1:1 and a plain offer on 1:2, and a shopper who synced:
    /// a working set (the shared server has two buckets) that carries the retailer once a scan hears its UUID or the
    /// service resolves one of its secure beacons.
    struct Shop {
        let server: StoryServer
        let uuid: String
        let retailer: StoryDevice
        let shopper: StoryDevice
        let identityKey: [UInt8]
        let exponent: UInt8
        /// The beacon's time counter now, from the provisioning document's `counter` at `counter_at`.
        let counterNow: UInt32

        init(form: String = "eddystone") throws {
            server = try StoryServer.shared.get()
            uuid = UUID().uuidString
            retailer = try server.retailer("Secure \(uuid.prefix(4))", uuid: uuid)
            try retailer.setOffer(1, 1, "Sushi for those who came", [])
            try retailer.setOffer(1, 2, "Pizza for anyone", [])
            let file = retailer.home.appendingPathComponent("beacon-1-1.json")
            try retailer.ok(["retailer", "beacon", "secure", "1", "1", "--form", form, "--output", file.path])
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            identityKey = try #require((document["identity_key"] as? String).flatMap(Self.bytes))
            exponent = UInt8(try #require(document["exponent"] as? Int))
            let counter = try #require(document["counter"] as? Int)
            let counterAt = try #require(
                (document["counter_at"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
            counterNow = UInt32(counter + Int(Date().timeIntervalSince(counterAt)))
            shopper = try server.newAccount()
            try shopper.ok(["sync"])
        }

        static func bytes(_ hex: String) -> [UInt8]? {
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return bytes
        }

        /// A walk of 12 s, 0.5 m from the beacon broadcasting its EIDs from `counter`, and 0.5 m from 1:2 unless
        /// `secureOnly`.
        func eddystoneWalk(counter: UInt32, secureOnly: Bool = false) throws -> URL {
            let file = server.work.appendingPathComponent("secure-\(UUID().uuidString).btsnoop")
            try retailer.ok(
                ["beacon", "simulate", "--walk", "eid:\(Hex.text(identityKey)):\(exponent)@0=0.5,12=0.5"]
                    + ["--eid-counter", "\(counter)", "--write", file.path]
                    + (secureOnly ? [] : ["--walk", "\(uuid):1:2@0=0.5,12=0.5"]))
            return file
        }

        /// The rotating iBeacon's identity at `counter`: its EID's first 4 bytes as major and minor.
        func rotatingIdentity(counter: UInt32) throws -> String {
            let eid = try EddystoneEID.ephemeralID(identityKey: identityKey, exponent: exponent, counter: counter)
            return "\(uuid):\(UInt16(eid[0]) << 8 | UInt16(eid[1])):\(UInt16(eid[2]) << 8 | UInt16(eid[3]))"
        }

        /// The titles a replay showed, and its summary line.
        func scan(_ walk: URL, _ options: [String] = []) throws -> (titles: [String], summary: [String: Any]) {
            let lines = try shopper.ok(["scan", "--replay", walk.path, "--json"] + options).jsonLines
            let titles = lines.compactMap { ($0["offer"] as? [String: Any])?["title"] as? String }
            let summary = try #require(lines.last { $0["event"] as? String == "summary" })
            return (titles, summary)
        }
    }

    enum Hex {
        static func text(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    }

    @Test func theCurrentIdentitiesShowThePresenceOfferAndItIsRedeemed() throws {
        let shop = try Shop()
        let (titles, summary) = try shop.scan(try shop.eddystoneWalk(counter: shop.counterNow))
        #expect(Set(titles) == ["Sushi for those who came", "Pizza for anyone"], "\(titles)")
        #expect(summary["secure_resolved"] as? Int ?? 0 >= 1 && summary["secure_queued"] as? Int == 0, "\(summary)")
        // The seen push is taken (the sighting went first), and the till's code comes.
        let synced = try shop.shopper.syncReport()
        #expect(synced["pushed"] as? Int == 2, "\(synced)")
        let redeemed = try shop.shopper.ok(["redeem", "\(shop.uuid):1:1", "--json"]).jsonLines.first
        #expect(redeemed?["event"] as? String == "redeemed" && redeemed?["code"] is String, "\(String(describing: redeemed))")
    }

    /// An Eddystone-EID names no retailer until the service resolves it: a working set that does not carry the
    /// retailer fetches it then, and the presence offer shows.
    @Test func aSecureBeaconOfARetailerNotCarriedIsFetchedOnceResolved() throws {
        let shop = try Shop()
        #expect(try shop.shopper.cachedTitles().isEmpty)
        let (titles, summary) = try shop.scan(try shop.eddystoneWalk(counter: shop.counterNow, secureOnly: true))
        #expect(titles == ["Sushi for those who came"], "\(titles)")
        #expect(summary["secure_resolved"] as? Int ?? 0 >= 1, "\(summary)")
        #expect(Set(try shop.shopper.cachedTitles()) == ["Sushi for those who came", "Pizza for anyone"])
    }

    @Test func aCaptureFromAnEarlierWindowVerifiesNothingAndShowsNoPresenceOffer() throws {
        let shop = try Shop()
        // Recorded four windows ago: the beacon's counter then.
        let stale = shop.counterNow - 4 << UInt32(shop.exponent)
        let (titles, summary) = try shop.scan(try shop.eddystoneWalk(counter: stale))
        #expect(titles == ["Pizza for anyone"], "\(titles)")
        #expect(summary["secure_resolved"] as? Int == 0 && summary["secure_unresolved"] as? Int ?? 0 >= 1, "\(summary)")
        let refused = try shop.shopper.run(["redeem", "\(shop.uuid):1:1"])
        #expect(refused.status != 0, "\(refused.stdout)")
    }

    @Test func aStaticCloneOfTheSecureBeaconIsNotVerifiedAndItsOfferNotShown() throws {
        let shop = try Shop()
        let clone = try shop.server.walk(["\(shop.uuid):1:1@0=0.5,12=0.5", "\(shop.uuid):1:2@0=0.5,12=0.5"])
        let (titles, summary) = try shop.scan(clone)
        #expect(titles == ["Pizza for anyone"], "\(titles)")
        #expect(summary["secure_resolved"] as? Int == 0, "\(summary)")
        // Nothing the server refuses went to the outbox: the sync's seen push is taken.
        #expect(try shop.shopper.syncReport()["pushed"] as? Int == 1)
        #expect(try shop.shopper.run(["redeem", "\(shop.uuid):1:1"]).status != 0)
    }

    @Test func aRotatingIBeaconUnderTheRetailersUUIDResolvesToItsBeacon() throws {
        let shop = try Shop(form: "ibeacon")
        let walk = try shop.server.walk(["\(try shop.rotatingIdentity(counter: shop.counterNow))@0=0.5,12=0.5"])
        let (titles, summary) = try shop.scan(walk)
        #expect(titles == ["Sushi for those who came"], "\(titles)")
        #expect(summary["secure_resolved"] as? Int == 1, "\(summary)")
        // The same identity from four windows ago is nobody's.
        let stale = try shop.server.walk([
            "\(try shop.rotatingIdentity(counter: shop.counterNow - 4 << UInt32(shop.exponent)))@0=0.5,12=0.5"
        ])
        let other = try shop.server.newAccount()
        try other.ok(["sync"])
        let lines = try other.ok(["scan", "--replay", stale.path, "--json"]).jsonLines
        #expect(!lines.contains { $0["event"] as? String == "offer" })
    }

    @Test func doctorSaysSecureBeaconsNeedTheServiceAndWhetherItAnswers() throws {
        let server = try StoryServer.shared.get()
        let device = server.device()
        func check(_ environment: [String: String]) throws -> [String: Any] {
            // No radio here is exit 69; the advice is printed all the same.
            let line = try #require(try device.run(["doctor", "--json"], environment).jsonLines.first)
            let checks = try #require(line["desktop_checks"] as? [[String: Any]])
            return try #require(checks.first { $0["name"] as? String == "secure-beacons" })
        }
        let answering = try check([:])
        #expect(answering["status"] as? String == "ok", "\(answering)")
        #expect((answering["detail"] as? String)?.contains(server.url) == true, "\(answering)")
        let silent = try check(["LOYALTY_SERVER": "http://127.0.0.1:9"])
        #expect(silent["status"] as? String == "warning", "\(silent)")
        #expect((silent["detail"] as? String)?.contains("secure beacons need the service reachable") == true)
        #expect((silent["remedy"] as? String)?.contains("next loyalty sync") == true, "\(silent)")
    }

    @Test func anOfflineScanQueuesAndTheNextSyncVerifies() throws {
        let shop = try Shop()
        // An Eddystone-EID names no retailer until resolved: offline, only a cache of the whole catalog has its offers.
        try shop.shopper.ok(["sync", "--all"])
        let walk = try shop.eddystoneWalk(counter: shop.counterNow)
        let (titles, summary) = try shop.scan(walk, ["--offline"])
        #expect(titles == ["Pizza for anyone"], "\(titles)")
        #expect(summary["secure_queued"] as? Int ?? 0 >= 1 && summary["secure_resolved"] as? Int == 0, "\(summary)")

        let synced = try shop.shopper.syncReport()
        #expect(synced["sightings_resolved"] as? Int ?? 0 >= 1, "\(synced)")
        #expect(synced["sightings_dropped"] as? Int == 0, "\(synced)")
        let verified = (synced["verified_offers"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(verified == ["Sushi for those who came"], "\(synced)")
        #expect(synced["pushed"] as? Int == 2, "\(synced)")
        // The visit is verified: the presence offer is the shopper's.
        let redeemed = try shop.shopper.ok(["redeem", "\(shop.uuid):1:1", "--json"]).jsonLines.first
        #expect(redeemed?["event"] as? String == "redeemed", "\(String(describing: redeemed))")
        // The queue is empty: a second sync sends nothing.
        #expect(try shop.shopper.syncReport()["sightings_resolved"] as? Int == 0)
    }
}
