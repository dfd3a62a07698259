import Foundation
import LoyaltyTesting
import Testing

/// The shopper's attention (issue 44) through the real binaries and server: a muted retailer, caps on offers per
/// hour and per day, and quiet hours hold offers back on every linked device of the account, and the scan's
/// summary says how many and why.
@Suite struct AttentionTests {
    /// A retailer of its own on the shared server, with an offer at 1:MINOR for each minor.
    static func retailer(_ server: StoryServer, minors: [Int]) throws -> (store: StoryDevice, uuid: String, name: String) {
        let uuid = UUID().uuidString
        let name = "Attention \(uuid.prefix(8))"
        let store = try server.retailer(name, uuid: uuid)
        for minor in minors { try store.setOffer(1, minor, "\(name) offer \(minor)", ["--category", "food"]) }
        return (store, uuid, name)
    }

    /// Near each beacon in turn for 4 s, 8 s apart (an offer shows for 5 s with --json).
    static func walk(_ server: StoryServer, _ beacons: [(uuid: String, minor: Int)]) throws -> URL {
        let end = 8 * beacons.count + 8
        return try server.walk(
            beacons.enumerated().map { index, beacon in
                let t = 8 * index + 2
                return "\(beacon.uuid):1:\(beacon.minor)@0=20,\(t)=20,\(t + 1)=1,\(t + 5)=1,\(t + 6)=20,\(end)=20"
            })
    }

    /// The scan's offer titles, when they showed (seconds into the capture) and its summary line.
    static func scan(_ device: StoryDevice, _ walk: URL, _ environment: [String: String] = [:]) throws
        -> (titles: [String], times: [Double], summary: [String: Any])
    {
        let lines = try device.ok(["scan", "--replay", walk.path, "--json"], environment).jsonLines
        let offers = lines.filter { $0["event"] as? String == "offer" }
        let summary = try #require(lines.last { $0["event"] as? String == "summary" && $0["records"] != nil })
        // The capture's clock: seconds from its first event.
        let start = lines.lazy.compactMap { $0["t"] as? Double }.first ?? 0
        return (
            offers.compactMap { ($0["offer"] as? [String: Any])?["title"] as? String },
            offers.compactMap { ($0["t"] as? Double).map { $0 - start } }, summary
        )
    }

    static func held(_ summary: [String: Any], _ reason: String) -> Int? {
        (summary["held_by"] as? [String: Any])?[reason] as? Int
    }

    @Test func aRetailerMutedOnOneDeviceIsMutedOnTheOtherUntilUnmuted() throws {
        let server = try StoryServer.shared.get()
        let loud = try Self.retailer(server, minors: [1])
        let quiet = try Self.retailer(server, minors: [1])
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        try phone.ok(["sync"])
        // By name, in another case, as a shopper types it.
        let muted = try phone.ok(["mute", quiet.name.uppercased()])
        #expect(muted.stdout.contains("muted \(quiet.name)"), "\(muted.stdout)")

        try tablet.ok(["sync"])
        let config = try #require(try tablet.ok(["config", "show", "--json"]).jsonLines.first)
        let names = (config["muted_retailers"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == [quiet.name], "\(config)")
        #expect(try tablet.ok(["config", "show"]).stdout.contains("muted              \(quiet.name)"))

        let walk = try Self.walk(server, [(quiet.uuid, 1), (loud.uuid, 1)])
        let scan = try Self.scan(tablet, walk)
        #expect(scan.titles == ["\(loud.name) offer 1"], "\(scan.titles)")
        #expect(scan.summary["held_back"] as? Int == 1 && Self.held(scan.summary, "muted") == 1, "\(scan.summary)")
        // The text summary says it too.
        let text = try tablet.ok(["scan", "--replay", walk.path, "--offline"])
        #expect(text.stderr.contains("held back: 1 (muted 1)"), "\(text.stderr)")

        // Unmuted by id on the tablet: the phone shows the offer, which was held, not lost.
        let id = try #require((config["muted_retailers"] as? [[String: Any]])?.first?["id"] as? String)
        try tablet.ok(["unmute", id])
        try phone.ok(["sync"])
        let again = try Self.scan(phone, walk)
        #expect(again.titles.sorted() == ["\(loud.name) offer 1", "\(quiet.name) offer 1"].sorted(), "\(again.titles)")
        #expect(again.summary["held_back"] as? Int == 0, "\(again.summary)")
    }

    @Test func theCapsCountOffersShownOnEveryDeviceOfTheAccount() throws {
        let server = try StoryServer.shared.get()
        let store = try Self.retailer(server, minors: [1, 2, 3])
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        let set = try phone.ok(["config", "set", "offers_per_hour", "1"])
        #expect(set.stdout.contains("offers_per_hour set to 1 for this account"), "\(set.stdout)")
        let walk = try Self.walk(server, [1, 2, 3].map { (store.uuid, $0) })

        let first = try Self.scan(phone, walk)
        #expect(first.titles == ["\(store.name) offer 1"], "\(first.titles)")
        #expect(Self.held(first.summary, "hourly_cap") == 2, "\(first.summary)")
        try phone.ok(["sync"])

        // The tablet learns the cap and the phone's show at its sync: nothing more shows this hour.
        let second = try Self.scan(tablet, walk)
        #expect(second.titles.isEmpty, "\(second.titles)")
        #expect(second.summary["held_back"] as? Int == 2 && Self.held(second.summary, "hourly_cap") == 2, "\(second.summary)")

        // A daily cap set on the tablet holds on the phone.
        try tablet.ok(["config", "set", "offers_per_hour", "10"])
        try tablet.ok(["config", "set", "offers_per_day", "1"])
        let third = try Self.scan(phone, walk)
        #expect(third.titles.isEmpty, "\(third.titles)")
        #expect(Self.held(third.summary, "daily_cap") == 2 && Self.held(third.summary, "hourly_cap") == 0, "\(third.summary)")
        let config = try #require(try phone.ok(["config", "show", "--json"]).jsonLines.first)
        #expect(config["offers_per_day"] as? Int == 1 && config["offers_per_hour"] as? Int == 10, "\(config)")

        // Raised again: the held offers show, one after the other.
        try phone.ok(["config", "set", "offers_per_day", "50"])
        let fourth = try Self.scan(phone, walk)
        #expect(fourth.titles == ["\(store.name) offer 2", "\(store.name) offer 3"], "\(fourth.titles)")
    }

    /// The device's clock and zone decide: quiet hours from this minute to two minutes on, in UTC, over a walk near
    /// one beacon for 200 s of capture time (the scan maps the capture onto now). The offer is held, then shows when
    /// the hours end.
    @Test func quietHoursHoldAnOfferAndReleaseItWhenTheyEnd() throws {
        let server = try StoryServer.shared.get()
        let store = try Self.retailer(server, minors: [1])
        let phone = try server.newAccount()
        let utc = ["TZ": "UTC"]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = Date()
        let minute = calendar.component(.hour, from: now) * 60 + calendar.component(.minute, from: now)
        func clock(_ minutes: Int) -> String {
            let wrapped = minutes % 1440
            return String(format: "%02d:%02d", wrapped / 60, wrapped % 60)
        }
        // Two minutes on may be past midnight: the range then wraps it.
        let range = "\(clock(minute))-\(clock(minute + 2))"
        try phone.ok(["config", "set", "quiet_hours", range], utc)
        let untilEnd = Double((minute + 2) * 60) - now.timeIntervalSince(calendar.startOfDay(for: now))
        let walk = try server.walk(["\(store.uuid):1:1@0=20,2=20,3=1,200=1,201=20,205=20"])

        let scan = try Self.scan(phone, walk, utc)
        #expect(scan.titles == ["\(store.name) offer 1"], "\(scan.titles)")
        let shownAt = try #require(scan.times.first)
        // Shown as the hours ended (the scan started a moment after `now`), not before.
        #expect(shownAt >= untilEnd - 15 && shownAt <= untilEnd + 5, "shown at \(shownAt), the hours ended at \(untilEnd)")
        #expect(Self.held(scan.summary, "quiet_hours") == 1, "\(scan.summary)")
        let shown = try #require(try phone.ok(["config", "show", "--json"], utc).jsonLines.first)
        #expect(shown["quiet_hours"] as? String == range, "\(shown)")
    }

    @Test func badSettingsGetAClearMessageAndNothingChanges() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        try phone.ok(["sync"])
        let cases: [([String], String)] = [
            (["config", "set", "quiet_hours", "21-08"], "'21-08' is not a range of two times: use HH:MM-HH:MM"),
            (["config", "set", "quiet_hours", "25:00-08:00"], "'25:00-08:00' is not a range of two times"),
            (["config", "set", "quiet_hours", "21:00-21:00"], "starts and ends at the same time: the range is empty"),
            (["config", "set", "offers_per_hour", "1.5"], "offers_per_hour takes a whole number from 0 to 10000, not '1.5'"),
            (["config", "set", "offers_per_day", "lots"], "offers_per_day takes a whole number from 0 to 10000"),
            (["mute", "Nobody At All"], "no retailer named 'Nobody At All' in this device's catalog: run `loyalty sync`"),
        ]
        for (arguments, message) in cases {
            let result = try phone.run(arguments)
            #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
        }
        // An id no retailer has: the server says so.
        let unknown = try phone.run(["mute", UUID().uuidString])
        #expect(unknown.status != 0 && unknown.stderr.contains("no retailer has this id"), "\(unknown.stderr)")
        // A range that wraps midnight is what quiet hours usually are.
        try phone.ok(["config", "set", "quiet_hours", "23:30-00:15"])
        let config = try #require(try phone.ok(["config", "show", "--json"]).jsonLines.first)
        #expect(config["quiet_hours"] as? String == "23:30-00:15" && config["offers_per_hour"] as? Int == 20, "\(config)")
        try phone.ok(["config", "set", "quiet_hours", "off"])
        #expect(try phone.ok(["config", "show", "--json"]).jsonLines.first?["quiet_hours"] is NSNull)
    }
}
