/// Dates of the proleptic Gregorian calendar as day counts from 1970-01-01 (Howard Hinnant's
/// days_from_civil and civil_from_days), for the hand-written timestamp readers and writers of the
/// JSON wire format and of PostgreSQL's text format: both hold hundreds of thousands of dates per
/// catalog, and Foundation's format styles switch to the Julian calendar before 1583.
public enum CivilCalendar {
    /// Days from 1970-01-01 to `year`-`month`-`day`.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01: the inverse of `days(year:month:day:)`.
    public static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    public static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Quotient and remainder rounded toward negative infinity: the day and time of day of a count
    /// of milliseconds or microseconds before 1970 too.
    public static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS`: the part that RFC 3339 and PostgreSQL's ISO output share. A year
    /// past 9999 is written in full.
    public static func appendDateTime(
        year: Int64, month: Int64, day: Int64, secondOfDay: Int64, to text: inout [UInt8]
    ) {
        appendDigits(year, width: 4, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &text)
        text.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, width: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, width: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, width: 2, to: &text)
    }

    /// Appends a non-negative `value` in decimal, zero-padded to at least `width` digits.
    public static func appendDigits(_ value: Int64, width: Int, to text: inout [UInt8]) {
        // In place, from the last digit back: no array per call (a catalog page writes a million of them).
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(count, width)))
        rest = value
        var index = text.count - 1
        while rest > 0 {
            text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }
}
