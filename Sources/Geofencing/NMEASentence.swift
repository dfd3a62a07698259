/// Why a line is not a usable NMEA 0183 sentence. A log or a receiver with such lines is read on:
/// the line is skipped and counted.
public enum NMEAError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line does not start with `$`.
    case notASentence
    /// Longer than any real sentence (the standard allows 82 characters; some receivers send more).
    case tooLong(Int)
    /// GGA and RMC must carry `*HH`.
    case missingChecksum
    case badChecksum(expected: UInt8, computed: UInt8)
    /// A field that is present but unreadable, named as in the standard (`latitude`, `utc_time`...).
    case malformedField(String)

    public var description: String {
        switch self {
        case .notASentence: "not an NMEA sentence (no leading $)"
        case .tooLong(let count): "sentence of \(count) characters is too long"
        case .missingChecksum: "no *HH checksum"
        case .badChecksum(let expected, let computed):
            "checksum \(hex(expected)) does not match the sentence (\(hex(computed)))"
        case .malformedField(let name): "malformed \(name) field"
        }
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}

/// The sentences a position comes from; any other type is `.other` and ignored.
public enum NMEASentence: Hashable, Sendable {
    /// Global Positioning System Fix Data: a position when the fix quality is not 0, and the UTC time of day.
    case gga(secondsOfDay: Double?, position: GeoCoordinate?)
    /// Recommended Minimum: a position when the status is A (valid), with the UTC date and time.
    case rmc(secondsOfDay: Double?, date: NMEADate?, position: GeoCoordinate?)
    /// Another sentence type (GSV, VTG...), named by its three letters.
    case other(String)

    /// The longest line accepted; the standard's limit is 82 with the line end.
    public static let maximumLength = 200

    /// Parses one line (with or without its CR LF).
    public init(parsing line: some StringProtocol) throws(NMEAError) {
        var bytes = Array(line.utf8)
        while let last = bytes.last, last == 0x0D || last == 0x0A || last == 0x20 { bytes.removeLast() }
        guard bytes.count <= Self.maximumLength else { throw .tooLong(bytes.count) }
        guard bytes.first == UInt8(ascii: "$") else { throw .notASentence }
        let body: ArraySlice<UInt8>
        if let star = bytes.lastIndex(of: UInt8(ascii: "*")) {
            guard star + 3 == bytes.count, let expected = Self.hexByte(bytes[star + 1], bytes[star + 2])
            else {
                throw .malformedField("checksum")
            }
            body = bytes[1..<star]
            let computed = body.reduce(0, ^)
            guard computed == expected else { throw .badChecksum(expected: expected, computed: computed) }
        } else {
            body = bytes[1...]
        }
        let fields = body.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard let address = fields.first, address.count >= 3,
            address.allSatisfy({ $0.isASCII && $0.isLetter })
        else { throw .malformedField("address") }
        let type = String(address.suffix(3))
        guard type == "GGA" || type == "RMC" else {
            self = .other(type)
            return
        }
        guard bytes.contains(UInt8(ascii: "*")) else { throw .missingChecksum }
        func field(_ index: Int) -> String { index < fields.count ? fields[index] : "" }
        switch type {
        case "GGA":
            guard fields.count >= 7 else { throw .malformedField("fields") }
            let quality = field(6)
            guard quality.isEmpty || Int(quality) != nil else { throw .malformedField("fix_quality") }
            let position =
                (Int(quality) ?? 0) == 0
                ? nil : try Self.position(field(2), field(3), field(4), field(5))
            self = .gga(secondsOfDay: try Self.secondsOfDay(field(1)), position: position)
        default:
            guard fields.count >= 10 else { throw .malformedField("fields") }
            let status = field(2)
            guard status == "A" || status == "V" || status.isEmpty else {
                throw .malformedField("status")
            }
            let position = status == "A" ? try Self.position(field(3), field(4), field(5), field(6)) : nil
            self = .rmc(
                secondsOfDay: try Self.secondsOfDay(field(1)), date: try NMEADate(parsing: field(9)),
                position: position)
        }
    }

    private static func hexByte(_ high: UInt8, _ low: UInt8) -> UInt8? {
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        guard let h = nibble(high), let l = nibble(low) else { return nil }
        return h << 4 | l
    }

    /// `hhmmss.ss`; nil when empty.
    private static func secondsOfDay(_ text: String) throws(NMEAError) -> Double? {
        guard !text.isEmpty else { return nil }
        let chars = Array(text)
        guard chars.count >= 6, chars.prefix(6).allSatisfy(\.isASCII),
            let hours = Int(String(chars[0..<2])),
            let minutes = Int(String(chars[2..<4])), let seconds = Double(String(chars[4...])),
            chars[4...].first?.isNumber == true, hours < 24, minutes < 60, seconds >= 0, seconds < 61
        else { throw .malformedField("utc_time") }
        return Double(hours * 3600 + minutes * 60) + seconds
    }

    /// `ddmm.mmmm,N` and `dddmm.mmmm,E`.
    private static func position(_ lat: String, _ ns: String, _ lon: String, _ ew: String)
        throws(NMEAError)
        -> GeoCoordinate
    {
        let latitude = try degrees(
            lat, degreeDigits: 2, hemisphere: ns, positive: "N", negative: "S", name: "latitude")
        let longitude = try degrees(
            lon, degreeDigits: 3, hemisphere: ew, positive: "E", negative: "W", name: "longitude")
        let coordinate = GeoCoordinate(latitude: latitude, longitude: longitude)
        guard coordinate.isValid else { throw .malformedField("latitude") }
        return coordinate
    }

    private static func degrees(
        _ text: String, degreeDigits: Int, hemisphere: String, positive: String, negative: String,
        name: String
    ) throws(NMEAError) -> Double {
        let chars = Array(text)
        guard chars.count > degreeDigits + 1,
            chars.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let whole = Double(String(chars[..<degreeDigits])),
            let minutes = Double(String(chars[degreeDigits...])),
            minutes < 60
        else { throw .malformedField(name) }
        let value = whole + minutes / 60
        switch hemisphere {
        case positive: return value
        case negative: return -value
        default: throw .malformedField(name == "latitude" ? "north_south" : "east_west")
        }
    }
}

/// The UTC date of an RMC sentence (`ddmmyy`; years 80-99 are 1980-1999, 00-79 are 2000-2079).
public struct NMEADate: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int

    /// nil when the field is empty.
    init?(parsing text: String) throws(NMEAError) {
        guard !text.isEmpty else { return nil }
        guard text.count == 6, text.allSatisfy({ $0.isASCII && $0.isNumber }),
            let day = Int(text.prefix(2)), let month = Int(text.dropFirst(2).prefix(2)),
            let yy = Int(text.suffix(2)),
            (1...12).contains(month), (1...31).contains(day)
        else { throw .malformedField("date") }
        self.year = yy < 80 ? 2000 + yy : 1900 + yy
        self.month = month
        self.day = day
    }

    /// Seconds from 1970-01-01T00:00:00Z to this date's midnight (H. Hinnant's days_from_civil).
    public var secondsSince1970: Double {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Double(era * 146_097 + dayOfEra - 719_468) * 86_400
    }
}

/// A position at a time: seconds since 1970 (UTC) from the receiver, not from this machine's clock.
public struct GeoFix: Hashable, Sendable {
    public var time: Double
    public var coordinate: GeoCoordinate

    public init(time: Double, coordinate: GeoCoordinate) {
        self.time = time
        self.coordinate = coordinate
    }
}

/// Turns NMEA lines into dated fixes, in order: an NMEA log's own timestamps are its clock.
///
/// RMC sentences carry the date; a GGA is dated by the last RMC (rolling over at midnight), so GGA
/// fixes before the first RMC are not used. A fix no later than the previous one (the GGA and RMC of
/// one epoch) is dropped. Bad lines are counted in `statistics` and skipped.
public struct NMEAStream: Sendable {
    public struct Statistics: Hashable, Sendable {
        public var lines = 0
        public var fixes = 0
        /// Lines that were not valid sentences (bad checksum, malformed fields...).
        public var malformed = 0
        /// Valid sentences without a usable dated position (other types, no fix yet, no date yet).
        public var ignored = 0
    }

    public private(set) var statistics = Statistics()
    /// The most recent error, for a diagnostic line.
    public private(set) var lastError: NMEAError?
    private var dayStart: Double?
    private var lastTime: Double?

    public init() {}

    /// The fix a line brings, if any. Blank lines are not counted.
    public mutating func feed(_ line: some StringProtocol) -> GeoFix? {
        guard line.contains(where: { !$0.isWhitespace }) else { return nil }
        statistics.lines += 1
        let sentence: NMEASentence
        do {
            sentence = try NMEASentence(parsing: line)
        } catch {
            statistics.malformed += 1
            lastError = error
            return nil
        }
        var fix: GeoFix?
        switch sentence {
        case .rmc(let seconds?, let date?, let position):
            dayStart = date.secondsSince1970
            if let position { fix = GeoFix(time: date.secondsSince1970 + seconds, coordinate: position) }
        case .gga(let seconds?, let position?):
            if var dayStart {
                // The day rolled over since the last RMC.
                if let lastTime, dayStart + seconds < lastTime - 43_200 {
                    dayStart += 86_400
                    self.dayStart = dayStart
                }
                fix = GeoFix(time: dayStart + seconds, coordinate: position)
            }
        default:
            break
        }
        guard let fix, lastTime.map({ fix.time > $0 }) ?? true else {
            statistics.ignored += 1
            return nil
        }
        lastTime = fix.time
        statistics.fixes += 1
        return fix
    }
}

/// Writes fixes as NMEA 0183 sentences (with checksums), for logs that `NMEAStream` and gpsd read.
public enum NMEAWriter {
    /// `$GPRMC,hhmmss.ss,A,ddmm.mmmmm,N,dddmm.mmmmm,E,0.0,0.0,ddmmyy,,,A*HH`
    public static func rmc(_ fix: GeoFix) -> String {
        let (day, seconds) = split(fix.time)
        let date = civil(day)
        let yy = date.year % 100
        let dateText = two(date.day) + two(date.month) + two(yy)
        return sentence("GPRMC,\(clock(seconds)),A,\(position(fix.coordinate)),0.0,0.0,\(dateText),,,A")
    }

    /// `$GPGGA,hhmmss.ss,ddmm.mmmmm,N,dddmm.mmmmm,E,1,08,0.9,10.0,M,47.0,M,,*HH`
    public static func gga(_ fix: GeoFix) -> String {
        let (_, seconds) = split(fix.time)
        return sentence("GPGGA,\(clock(seconds)),\(position(fix.coordinate)),1,08,0.9,10.0,M,47.0,M,,")
    }

    /// `$` + body + `*HH`.
    public static func sentence(_ body: String) -> String {
        "$" + body + "*" + hex(body.utf8.reduce(0, ^))
    }

    private static func split(_ time: Double) -> (day: Int, seconds: Double) {
        let day = Int((time / 86_400).rounded(.down))
        return (day, time - Double(day) * 86_400)
    }

    private static func clock(_ seconds: Double) -> String {
        let centiseconds = Int((seconds * 100).rounded())
        let whole = centiseconds / 100
        return two(whole / 3600) + two(whole / 60 % 60) + two(whole % 60) + "."
            + two(centiseconds % 100)
    }

    private static func position(_ coordinate: GeoCoordinate) -> String {
        angle(abs(coordinate.latitude), degreeDigits: 2) + (coordinate.latitude < 0 ? ",S," : ",N,")
            + angle(abs(coordinate.longitude), degreeDigits: 3) + (coordinate.longitude < 0 ? ",W" : ",E")
    }

    /// `dddmm.mmmmm`: five decimals of a minute are about 2 cm.
    private static func angle(_ value: Double, degreeDigits: Int) -> String {
        let hundredThousandths = Int((value * 60 * 100_000).rounded())
        let degrees = hundredThousandths / 6_000_000
        let minutes = hundredThousandths % 6_000_000
        let minuteText = two(minutes / 100_000) + "." + pad(minutes % 100_000, 5)
        return pad(degrees, degreeDigits) + minuteText
    }

    private static func two(_ value: Int) -> String { pad(value, 2) }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// H. Hinnant's civil_from_days.
    private static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
