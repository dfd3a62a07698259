import Foundation
import LoyaltyTesting
import Testing

/// A secure beacon through the guest's kernel stack, in the same guest as LiveRadioTests (one suite, one boot).
extension LiveRadioTests {
    /// The service issues a beacon's provisioning document; the peer broadcasts its EIDs (computed by the peer, as
    /// Google's tool does, from the document alone); the scan in the guest resolves them through the running service
    /// (reached over QEMU's user network), shows the presence offer, and redeems it there; the till accepts the code.
    @Test func aSecureBeaconsOfferIsShownLiveAndAcceptedAtTheTill() throws {
        guard let guest = guest() else { return }
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Live secure shop", uuid: uuid)
        try store.setOffer(1, 1, "Sushi, for those who are there", [])
        let document = server.work.appendingPathComponent("beacon-1-1-\(UUID().uuidString).json").path
        try store.ok(["retailer", "beacon", "secure", "1", "1", "--form", "eddystone", "--output", document])
        // The shopper's account is made in the guest: a device token goes only to the server that issued it, which
        // the guest names by the address it reaches the host at (plain HTTP over QEMU's own network, opted in).
        let service = try guest.hostURL(server.url)
        let name = "story-secure"
        let environment = "env LOYALTY_HOME=/tmp/\(name) LOYALTY_SERVER=\(service) LOYALTY_INSECURE_HTTP=1"
        let account = try guest.run(
            "\(environment) timeout 120 \(loyalty) account create && \(environment) timeout 120 \(loyalty) sync", timeout: 300)
        try #require(account.status == 0, "\(account.stdout)\(account.stderr)")
        try ready(guest)
        let advertised = try guest.peer.advertiseSecure(file: document, rssi: -55)
        defer { try? guest.peer.stop() }
        #expect(advertised.count == 21 && advertised[11] == 0x30, "an Eddystone-EID frame: \(advertised)")

        try guest.startInBackground("exec \(environment) \(loyalty) scan --json --snapshot-interval 0.5", name: name)
        let shown = try waitForLine(guest, name, containing: "\"offer\"", seconds: 60)
        _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/\(name).pid)")
        let scan = try guest.background(name, timeout: 30)
        #expect(shown, "no offer: \(scan.stdout.suffix(1200))\(scan.stderr)")
        let offers = scan.jsonLines.filter { $0["event"] as? String == "offer" }
            .compactMap { ($0["offer"] as? [String: Any])?["title"] as? String }
        #expect(offers == ["Sushi, for those who are there"], "\(scan.stdout.suffix(800))\(scan.stderr)")
        let eid = advertised.suffix(8).map { String(format: "%02X", $0) }.joined()
        #expect(rangedBeacons(scan).contains { $0["eid"] as? String == eid }, "the peer's EID, heard live")

        let redeemed = try guest.run("\(environment) timeout 60 \(loyalty) redeem \(uuid):1:1 --json", timeout: 90)
        #expect(redeemed.status == 0, "\(redeemed.stdout)\(redeemed.stderr)")
        let code = try #require(redeemed.jsonLines.first?["code"] as? String, "\(redeemed.stdout)")
        let tillKey = try #require(
            try store.ok(["retailer", "till-key", "create", "--name", "Sushi bar", "--json"]).jsonLines.first?["till_key"]
                as? String)
        let accepted = try store.run(["till", "accept", code, "--till-key", tillKey])
        #expect(accepted.status == 0, "\(accepted.stdout)\(accepted.stderr)")
    }
}
