import Foundation
import LoyaltyAPI
import Testing

/// An offer's weekly hours: days and hours in the store's time zone, ranges past midnight, and a clear refusal of
/// each kind of bad schedule.
@Suite struct OfferScheduleTests {
    /// 2027-01-15 (a Friday) at the given UTC hour and minute.
    static func friday(_ hour: Int, _ minute: Int = 0) -> Date {
        Date(timeIntervalSince1970: 1_800_000_000 - 8 * 3600 + Double(hour * 3600 + minute * 60))
    }

    @Test func weekdayEveningsInLondonAndASaturdayMorning() throws {
        let schedule = try OfferSchedule(parsing: "Europe/London: weekdays 17:00-19:00, sat 10:00-12:00")
        #expect(schedule.description == "Europe/London: weekdays 17:00-19:00, sat 10:00-12:00")
        // January: London is on UTC.
        #expect(schedule.contains(Self.friday(17, 30)) && !schedule.contains(Self.friday(19)) && !schedule.contains(Self.friday(16, 59)))
        #expect(schedule.contains(Self.friday(24 + 11)) && !schedule.contains(Self.friday(24 + 12)))
        // Sunday: neither.
        #expect(!schedule.contains(Self.friday(48 + 11)) && !schedule.contains(Self.friday(48 + 17, 30)))
        // The same hours in Tokyo (UTC+9) are 08:00-10:00 UTC.
        let tokyo = try OfferSchedule(parsing: "Asia/Tokyo: fri 17:00-19:00")
        #expect(tokyo.contains(Self.friday(8, 30)) && !tokyo.contains(Self.friday(17, 30)))
    }

    @Test func aRangePastMidnightBelongsToTheDayItStarts() throws {
        let late = try OfferSchedule(parsing: "UTC: fri-sat 22:00-02:00")
        #expect(late.description == "UTC: fri-sat 22:00-02:00")
        #expect(late.contains(Self.friday(23)) && late.contains(Self.friday(24 + 1)) && late.contains(Self.friday(48 + 1)))
        // Thursday night into Friday is not Friday's.
        #expect(!late.contains(Self.friday(1)) && !late.contains(Self.friday(24 + 2)))
        let weekends = try OfferSchedule(parsing: "UTC: weekends 10:00-12:00, daily 06:00-07:00")
        #expect(weekends.contains(Self.friday(24 + 10)) && weekends.contains(Self.friday(6, 30)) && !weekends.contains(Self.friday(10)))
    }

    @Test func eachKindOfBadScheduleIsNamed() {
        for (text, message) in [
            ("Mars/Olympus_Mons: daily 10:00-12:00",
             "'Mars/Olympus_Mons' is not a time zone this machine knows: use an IANA name such as Europe/London"),
            ("Europe/London: 17:00-19:00",
             "'17:00-19:00' has no days: name them first, e.g. Europe/London: weekdays 17:00-19:00, sat 10:00-12:00"),
            ("Europe/London: ",
             "'Europe/London: ' has no days and hours: e.g. Europe/London: weekdays 17:00-19:00, sat 10:00-12:00"),
            ("weekdays 17:00-19:00",
             "'weekdays 17:00-19:00' does not start with the store's time zone: e.g. Europe/London: weekdays 17:00-19:00, sat 10:00-12:00"),
            ("UTC: someday 10:00-12:00",
             "'someday' are not days: use daily, weekdays, weekends, a day (mon ... sun) or a span (mon-fri)"),
            ("UTC: mon 10:00-10:00", "'10:00-10:00' starts and ends at the same time: the range is empty"),
            ("UTC: mon 10-12", "'10-12' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
        ] {
            #expect(throws: ValidationError(field: "schedule", message: message), "\(text)") {
                try OfferSchedule(parsing: text)
            }
        }
        // A draft with one is refused as a whole.
        #expect(throws: ValidationError.self) {
            try OfferDraft(title: "Happy hour", schedule: "Nowhere/Land: daily 17:00-19:00").validate()
        }
    }

    @Test func anOfferOutsideItsHoursIsNotValid() throws {
        let offer = Offer(
            id: UUID(), retailerID: UUID(), major: 1, minor: 1, title: "Happy hour",
            schedule: "UTC: weekdays 17:00-19:00", updatedAt: Self.friday(0))
        #expect(offer.isValid(at: Self.friday(18)) && !offer.isValid(at: Self.friday(20)))
    }
}
