import Foundation

/// When an offer may be shown and redeemed, week after week, in the store's time zone (issue 44):
/// `Europe/London: weekdays 17:00-19:00, sat 10:00-12:00`. Each range is days and hours; the end is not part of
/// it, and an end before the start runs past midnight into the next day. Outside every range the offer is not
/// shown, and the server refuses to redeem it.
public struct OfferSchedule: Sendable, Hashable, CustomStringConvertible {
    public struct Range: Sendable, Hashable {
        /// Weekdays as `Calendar` numbers them: 1 Sunday ... 7 Saturday.
        public var days: Set<Int>
        /// The words they were given in (`weekdays`, `mon-fri`, `sat`), for the description.
        public var daysText: String
        public var hours: QuietHours
    }

    public var timeZone: TimeZone
    /// The zone's name as given: Foundation names some zones otherwise (UTC as GMT).
    public var timeZoneName: String
    public var ranges: [Range]

    private static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    private static let example = "e.g. Europe/London: weekdays 17:00-19:00, sat 10:00-12:00"

    public init(parsing text: String, field: String = "schedule") throws(ValidationError) {
        func refuse(_ message: String) -> ValidationError { ValidationError(field: field, message: message) }
        guard let colon = text.range(of: ": ") else {
            throw refuse("'\(text)' does not start with the store's time zone: \(Self.example)")
        }
        let zoneName = text[..<colon.lowerBound].trimmingCharacters(in: .whitespaces)
        guard let zone = TimeZone(identifier: zoneName) else {
            throw refuse(
                "'\(zoneName)' is not a time zone this machine knows: use an IANA name such as Europe/London")
        }
        var ranges: [Range] = []
        for part in text[colon.upperBound...].split(separator: ",") {
            let words = part.split(separator: " ")
            guard words.count == 2 else {
                if words.count == 1, words[0].contains(":") {
                    throw refuse("'\(words[0])' has no days: name them first, \(Self.example)")
                }
                throw refuse("'\(part.trimmingCharacters(in: .whitespaces))' is not DAYS HH:MM-HH:MM: \(Self.example)")
            }
            let dayText = words[0].lowercased()
            guard let days = Self.days(dayText) else {
                throw refuse(
                    "'\(words[0])' are not days: use daily, weekdays, weekends, a day (mon ... sun) or a span (mon-fri)")
            }
            ranges.append(Range(days: days, daysText: dayText, hours: try QuietHours(parsing: String(words[1]), field: field)))
        }
        guard !ranges.isEmpty else { throw refuse("'\(text)' has no days and hours: \(Self.example)") }
        timeZone = zone
        timeZoneName = zoneName
        self.ranges = ranges
    }

    /// `daily`, `weekdays`, `weekends`, `mon`, or `mon-fri` (a span may wrap the week: `fri-mon`).
    private static func days(_ text: String) -> Set<Int>? {
        switch text {
        case "daily": return Set(1...7)
        case "weekdays": return Set(2...6)
        case "weekends": return [1, 7]
        default: break
        }
        let ends = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(ends.count), let first = dayNames.firstIndex(of: ends[0]),
            let last = dayNames.firstIndex(of: ends[ends.count - 1])
        else { return nil }
        var days: Set<Int> = [first + 1]
        var day = first
        while day != last {
            day = (day + 1) % 7
            days.insert(day + 1)
        }
        return days
    }

    /// Whether `date` falls in one of the ranges, in the store's time zone.
    public func contains(_ date: Date) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        let weekday = parts.weekday ?? 1
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let yesterday = weekday == 1 ? 7 : weekday - 1
        return ranges.contains { range in
            let hours = range.hours
            if hours.start < hours.end { return range.days.contains(weekday) && hours.contains(minuteOfDay: minute) }
            // Past midnight: the evening belongs to its day, the small hours to the day before.
            return (range.days.contains(weekday) && minute >= hours.start)
                || (range.days.contains(yesterday) && minute < hours.end)
        }
    }

    public var description: String {
        "\(timeZoneName): " + ranges.map { "\($0.daysText) \($0.hours)" }.joined(separator: ", ")
    }
}
