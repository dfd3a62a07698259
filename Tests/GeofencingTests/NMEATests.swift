import Beacons
import Foundation
import Geofencing
import Testing

@Suite struct NMEATests {
    /// The GGA example of the NMEA 0183 literature (gpsd's "NMEA 0183 Revealed", Bertilsson).
    @Test func parsesGGA() throws {
        let sentence = try NMEASentence(
            parsing: "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\r\n")
        guard case .gga(let seconds, let position?) = sentence else {
            Issue.record("\(sentence)")
            return
        }
        #expect(seconds == Double(12 * 3600 + 35 * 60 + 19))
        #expect(abs(position.latitude - (48 + 7.038 / 60)) < 1e-12)
        #expect(abs(position.longitude - (11 + 31.0 / 60)) < 1e-12)
    }

    @Test func parsesRMCWithDateAndHemispheres() throws {
        let sentence = try NMEASentence(
            parsing: "$GPRMC,225446,A,4916.45,N,12311.12,W,000.5,054.7,191194,020.3,E*68")
        guard case .rmc(let seconds?, let date?, let position?) = sentence else {
            Issue.record("\(sentence)")
            return
        }
        #expect(seconds == 22 * 3600 + 54 * 60 + 46)
        #expect(date == (try dateOf("191194")))
        #expect(date.secondsSince1970 == 785_203_200)  // 1994-11-19T00:00:00Z
        #expect(position.longitude < 0 && abs(position.longitude + (123 + 11.12 / 60)) < 1e-12)
    }

    @Test func noFixMeansNoPosition() throws {
        #expect(
            try NMEASentence(parsing: NMEAWriter.sentence("GPGGA,123519,,,,,0,00,,,M,,M,,"))
                == .gga(secondsOfDay: 45319, position: nil))
        guard
            case .rmc(_, _, nil) = try NMEASentence(
                parsing: NMEAWriter.sentence("GPRMC,123519,V,,,,,,,010126,,,N"))
        else {
            Issue.record("an RMC with status V has no position")
            return
        }
        #expect(try NMEASentence(parsing: "$GPGSV,1,1,00*79") == .other("GSV"))
    }

    @Test func badSentencesAreTypedErrors() {
        let good = "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47"
        #expect(throws: NMEAError.badChecksum(expected: 0x48, computed: 0x47)) {
            try NMEASentence(parsing: good.replacingOccurrences(of: "*47", with: "*48"))
        }
        // One flipped digit in the body: the checksum catches it.
        #expect(throws: NMEAError.badChecksum(expected: 0x47, computed: 0x46)) {
            try NMEASentence(parsing: good.replacingOccurrences(of: "4807.038", with: "4807.039"))
        }
        #expect(throws: NMEAError.missingChecksum) {
            try NMEASentence(parsing: "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
        }
        #expect(throws: NMEAError.notASentence) { try NMEASentence(parsing: "GPGGA,1*00") }
        #expect(throws: NMEAError.tooLong(300)) {
            try NMEASentence(parsing: "$" + String(repeating: "A", count: 299))
        }
        #expect(throws: NMEAError.malformedField("checksum")) {
            try NMEASentence(parsing: "$GPGGA,1*4")
        }
        let malformed: [(String, String)] = [
            ("GPGGA,123519,48x7.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "latitude"),
            ("GPGGA,123519,4807.038,Q,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "north_south"),
            ("GPGGA,123519,9907.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "latitude"),
            ("GPGGA,256519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,", "utc_time"),
            ("GPGGA,123519,4807.038,N", "fields"),
            ("GPRMC,225446,A,4916.45,N,12311.12,W,000.5,054.7,321394,020.3,E", "date"),
            ("GPRMC,225446,X,4916.45,N,12311.12,W,000.5,054.7,191194,020.3,E", "status"),
            ("G1GGA,1", "address"),
        ]
        for (body, field) in malformed {
            #expect(throws: NMEAError.malformedField(field), "\(body)") {
                try NMEASentence(parsing: NMEAWriter.sentence(body))
            }
        }
    }

    @Test func writerRoundTrips() throws {
        let fix = GeoFix(
            time: 1_767_225_600 + 3_723.25,
            coordinate: GeoCoordinate(latitude: -33.8568, longitude: 151.2153))
        var stream = NMEAStream()
        #expect(stream.feed(NMEAWriter.rmc(fix)).map { abs($0.time - fix.time) < 1e-6 } == true)
        let next = GeoFix(
            time: fix.time + 1, coordinate: GeoCoordinate(latitude: 51.5, longitude: -0.12))
        let fed = stream.feed(NMEAWriter.gga(next))
        let read = try #require(fed)
        #expect(abs(read.time - next.time) < 1e-6)
        #expect(GreatCircle.distance(read.coordinate, next.coordinate) < 0.05)
    }

    @Test func streamDatesGGAByRMCRollsOverMidnightAndCountsBadLines() {
        let midnight = 1_767_225_600.0  // 2026-01-01T00:00:00Z
        let here = GeoCoordinate(latitude: 51.5, longitude: -0.12)
        var stream = NMEAStream()
        let lines = [
            NMEAWriter.gga(GeoFix(time: midnight - 2, coordinate: here)),  // no date yet: ignored
            NMEAWriter.rmc(GeoFix(time: midnight - 1, coordinate: here)),
            NMEAWriter.gga(GeoFix(time: midnight - 1, coordinate: here)),  // same epoch: dropped
            "$GPGGA,garbage*00",
            "",
            "$GPGSV,1,1,00*79",
            NMEAWriter.gga(GeoFix(time: midnight + 1, coordinate: here)),  // after midnight, dated by the last RMC
            String(NMEAWriter.gga(GeoFix(time: midnight + 2, coordinate: here)).dropLast()) + "0",
        ]
        let fixes = lines.compactMap { stream.feed($0) }
        #expect(fixes.map(\.time) == [midnight - 1, midnight + 1])
        #expect(stream.statistics.lines == 7)
        #expect(stream.statistics.fixes == 2)
        #expect(stream.statistics.malformed == 2)
        #expect(stream.statistics.ignored == 3)
    }

    @Test func randomBytesNeverCrash() {
        var generator = SplitMix64(seed: 42)
        var stream = NMEAStream()
        let alphabet = Array("$GPRMCGA,.*0123456789ABCDEFNSEW\r\n-")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...90, using: &generator)
            let line = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            _ = stream.feed(line)
            _ = stream.feed(NMEAWriter.sentence(String(line.dropFirst())))
        }
        #expect(stream.statistics.lines > 0)
    }
}

private func dateOf(_ text: String) throws -> NMEADate {
    guard
        case .rmc(_, let date?, _) = try NMEASentence(
            parsing: NMEAWriter.sentence("GPRMC,000000,V,,,,,,,\(text),,,N"))
    else { throw NMEAError.malformedField("date") }
    return date
}

@Suite struct GPSDReportTests {
    @Test func readsTPVFixesOnly() {
        let tpv =
            #"{"class":"TPV","device":"/dev/pts/3","mode":3,"time":"2026-01-01T00:00:01.500Z","lat":51.5136,"lon":-0.1365,"alt":10.0}"#
        #expect(
            GPSDReport.fix(fromLine: tpv)
                == GeoFix(
                    time: 1_767_225_601.5, coordinate: GeoCoordinate(latitude: 51.5136, longitude: -0.1365)))
        #expect(
            GPSDReport.fix(fromLine: #"{"class":"TPV","mode":1,"time":"2026-01-01T00:00:01Z"}"#) == nil)
        #expect(GPSDReport.fix(fromLine: #"{"class":"VERSION","release":"3.22"}"#) == nil)
        #expect(
            GPSDReport.fix(
                fromLine: #"{"class":"TPV","mode":2,"lat":95,"lon":0,"time":"2026-01-01T00:00:01Z"}"#)
                == nil)
        #expect(GPSDReport.fix(fromLine: #"{"class":"TPV", garbage"#) == nil)
        #expect(GPSDReport.watchCommand.hasSuffix("}\n"))
    }
}
