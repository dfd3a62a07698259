import Foundation
import Geofencing

/// Where positions come from: `--location` of `loyalty scan`.
public enum LocationSource: Equatable, Sendable {
    case gpsd(host: String, port: UInt16)
    case nmea(path: String)
    case fixed(GeoCoordinate)

    /// `gpsd`, `gpsd:HOST:PORT`, `nmea:FILE` or `fixed:LAT,LON`.
    public init?(parsing text: String) {
        if text == "gpsd" {
            self = .gpsd(host: "localhost", port: 2947)
        } else if text.hasPrefix("gpsd:") {
            let rest = text.dropFirst(5)
            guard let colon = rest.lastIndex(of: ":"),
                let port = UInt16(rest[rest.index(after: colon)...]),
                port > 0, colon > rest.startIndex
            else { return nil }
            self = .gpsd(host: String(rest[..<colon]), port: port)
        } else if text.hasPrefix("nmea:"), text.count > 5 {
            self = .nmea(path: String(text.dropFirst(5)))
        } else if text.hasPrefix("fixed:"), let point = GeoCoordinate(parsing: text.dropFirst(6)) {
            self = .fixed(point)
        } else {
            return nil
        }
    }
}

/// A position source that cannot be used.
public enum PositionSourceError: Error, Equatable, CustomStringConvertible {
    /// A NMEA log that cannot be read.
    case unreadableLog(path: String, reason: String)
    /// gpsd cannot be reached.
    case gpsdUnavailable(String)

    public var description: String {
        switch self {
        case .unreadableLog(let path, let reason): "cannot read \(path): \(reason)"
        case .gpsdUnavailable(let reason): reason
        }
    }
}

/// How following a position source ended.
public enum PositionsEnd: Equatable, Sendable {
    /// The one fix of a fixed position was handed over.
    case fixed
    /// The log ended; what was read.
    case log(NMEAStream.Statistics)
    /// gpsd closed the connection.
    case gpsdClosed
    /// gpsd has no active receiver any more: no more fixes will come.
    case gpsdReceiversGone
}

/// Hands every position of a live or logged source to `observe` as it comes; a `fixed` position is one
/// fix at `now`.
public func followPositions(
    _ source: LocationSource, now: Double, _ observe: (GeoFix) throws -> Void
) throws -> PositionsEnd {
    switch source {
    case .fixed(let point):
        try observe(GeoFix(time: now, coordinate: point))
        return .fixed
    case .nmea(let file):
        var fixes = try NMEAFixes(path: file)
        while let fix = fixes.next() { try observe(fix) }
        return .log(fixes.statistics)
    case .gpsd(let host, let port):
        let connection: GPSDConnection
        do { connection = try GPSDConnection(host: host, port: port) } catch {
            throw PositionSourceError.gpsdUnavailable(error.description)
        }
        var gpsd = GPSDSession()
        while let line = connection.nextLine() {
            if let fix = gpsd.read(line) { try observe(fix) }
            if gpsd.receiversGone { return .gpsdReceiversGone }
        }
        return .gpsdClosed
    }
}

/// The fixes of a NMEA 0183 log, one at a time, on the log's own clock.
public struct NMEAFixes {
    private let lines: [Substring]
    private var index = 0
    private var stream = NMEAStream()

    public init(path: String) throws(PositionSourceError) {
        let log: String
        do { log = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw .unreadableLog(path: path, reason: error.localizedDescription)
        }
        lines = log.split(whereSeparator: \.isNewline)
    }

    public var statistics: NMEAStream.Statistics { stream.statistics }

    public mutating func next() -> GeoFix? {
        while index < lines.count {
            index += 1
            if let fix = stream.feed(lines[index - 1]) { return fix }
        }
        return nil
    }
}
