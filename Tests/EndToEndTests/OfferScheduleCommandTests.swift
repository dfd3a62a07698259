import Foundation
import LoyaltyTesting
import Testing

/// A retailer's weekly hours on an offer, through the real binaries and server: set and shown by the retailer's
/// CLI, carried by CSV export and import, hiding the offer from a scan out of hours, and the server refusing to
/// redeem it then (409 offer_out_of_hours).
@Suite struct OfferScheduleCommandTests {
    /// `UTC: daily HH:MM-HH:MM` from `from` to `to` minutes after now.
    static func hours(from: Int, to: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = Date()
        let minute = calendar.component(.hour, from: now) * 60 + calendar.component(.minute, from: now)
        func clock(_ minutes: Int) -> String {
            let wrapped = ((minutes % 1440) + 1440) % 1440
            return String(format: "%02d:%02d", wrapped / 60, wrapped % 60)
        }
        return "UTC: daily \(clock(minute + from))-\(clock(minute + to))"
    }

    @Test func anOfferOutOfHoursIsNeitherShownNorRedeemed() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Scheduled \(uuid.prefix(8))", uuid: uuid)
        let onNow = Self.hours(from: -60, to: 60)
        try store.setOffer(1, 1, "Happy hour", ["--schedule", onNow])
        let listed = try store.ok(["retailer", "offers"]).stdout
        #expect(listed.contains("HOURS") && listed.contains(onNow), "\(listed)")
        let walk = try server.walk(["\(uuid):1:1@0=20,2=20,3=1,8=1,9=20,16=20"])

        let phone = try server.newAccount()
        try phone.ok(["sync"])
        #expect(try phone.scan(walk).map(\.title) == ["Happy hour"])

        // The hours move away from now: a redemption is refused, and another shopper's scan does not show it.
        let later = Self.hours(from: 120, to: 180)
        try store.setOffer(1, 1, "Happy hour", ["--schedule", later])
        #expect(try store.ok(["retailer", "offers", "--json"]).jsonLines.first?["schedule"] as? String == later)
        try phone.ok(["sync"])
        let refused = try phone.run(["redeem", "\(uuid):1:1"])
        #expect(refused.status != 0, "\(refused.stdout)")
        #expect(refused.stderr.contains("the offer is on only in its hours (\(later)), and it is not now"), "\(refused.stderr)")
        let tablet = try server.newAccount()
        try tablet.ok(["sync"])
        #expect(try tablet.scan(walk).isEmpty)

        // CSV carries the schedule there and back.
        let exported = server.work.appendingPathComponent("schedule-\(uuid).csv")
        try store.ok(["retailer", "offers", "export", "--output", exported.path])
        let text = try String(contentsOf: exported, encoding: .utf8)
        #expect(text.hasPrefix("major,minor,title,") && text.contains(",schedule,shows_per_day\r\n") && text.contains(later), "\(text)")
        let reimported = try store.ok(["retailer", "offers", "import", exported.path, "--json"]).jsonLines
        #expect(reimported.first?["unchanged"] as? Int == 1, "\(reimported)")
        // Back in hours by import: the tablet sees it.
        try Data(text.replacingOccurrences(of: later, with: onNow).utf8).write(to: exported)
        #expect(try store.ok(["retailer", "offers", "import", exported.path, "--json"]).jsonLines.first?["updated"] as? Int == 1)
        try tablet.ok(["sync"])
        #expect(try tablet.scan(walk).map(\.title) == ["Happy hour"])
    }

    @Test func aScheduleWithAnUnknownZoneOrNoDaysIsRefusedClearly() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Unscheduled \(uuid.prefix(8))", uuid: uuid)
        for (schedule, message) in [
            ("Mars/Olympus_Mons: daily 10:00-12:00", "'Mars/Olympus_Mons' is not a time zone this machine knows"),
            ("Europe/London: 17:00-19:00", "'17:00-19:00' has no days: name them first"),
            ("weekdays 17:00-19:00", "does not start with the store's time zone"),
        ] {
            let result = try store.run(["retailer", "offer", "set", "1", "1", "--title", "Never", "--schedule", schedule])
            #expect(result.status == 64 && result.stderr.contains(message), "\(schedule): \(result.status) \(result.stderr)")
        }
        // By CSV: the line and the field are named, and nothing is imported.
        let file = server.work.appendingPathComponent("bad-schedule-\(uuid).csv")
        try Data("major,minor,title,schedule\n1,1,Never,Mars/Olympus_Mons: daily 10:00-12:00\n".utf8).write(to: file)
        let refused = try store.run(["retailer", "offers", "import", file.path])
        #expect(refused.status == 65 && refused.stderr.contains("line 2") && refused.stderr.contains("is not a time zone"), "\(refused.stderr)")
        #expect(try store.ok(["retailer", "offers", "--json"]).jsonLines.isEmpty)
    }
}
