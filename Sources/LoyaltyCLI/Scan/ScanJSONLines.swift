import Beacons
import Foundation
import Geofencing
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of `loyalty scan --json`, one per event, each with "event" and "t" first:
/// enter, exit, range, offer, and the closing summaries.
/// (Range lines are written in place into the output's buffer: `RangeLines`.)
public struct ScanJSONLines {
    public init() {}

    /// `{"event":"enter","t":..,"region":"UUID[:MAJOR[:MINOR]]"}`, or exit.
    public func line(_ event: RegionEvent) -> String {
        let name =
            switch event.kind {
            case .enter: "enter"
            case .exit: "exit"
            case .state(let state): state.rawValue
            }
        return JSONValue.object([
            ("event", .string(name)), ("t", Self.roundedSeconds(event.time)),
            ("region", .string(event.region.description)),
        ]).text
    }

    /// `{"event":"offer","t":..,"offer":{"id":..,"retailer":..,"major":..,"minor":..,"title":..,"category":..}}`
    public func line(_ presentation: OfferPresentation) -> String {
        let offer = presentation.offer.offer
        return JSONValue.object([
            ("event", .string("offer")), ("t", .double(presentation.time)),
            (
                "offer",
                .object([
                    ("id", .string(offer.id.uuidString.lowercased())),
                    ("retailer", .string(presentation.offer.retailer.name)),
                    ("major", .int(Int(offer.major))), ("minor", .int(Int(offer.minor))),
                    ("title", .string(offer.title)), ("category", offer.category.map(JSONValue.string) ?? .null),
                ])
            ),
        ]).text
    }

    /// `{"event":"enter","t":..,"region":{"store":..,"name":..,"retailer":..}}`, or exit.
    public func line(_ event: GeoRegionEvent, store resolved: ResolvedStore) -> String {
        JSONValue.object([
            ("event", .string(event.kind.rawValue)), ("t", .double(event.time)),
            (
                "region",
                .object([
                    ("store", .string(resolved.store.storeID)), ("name", .string(resolved.store.name)),
                    ("retailer", .string(resolved.retailer.name)),
                ])
            ),
        ]).text
    }

    /// The replay's closing line: what the capture held, and what became of the secure beacons' sightings.
    public func line(_ statistics: CaptureStatistics, secure: SecureBeaconResolver.Counts? = nil) -> String {
        var fields: [(String, JSONValue)] = [
            ("event", .string("summary")), ("records", .int(statistics.records)),
            ("advertising_reports", .int(statistics.advertisingReports)),
            ("beacon_frames", .int(statistics.beaconFrames)), ("malformed_skipped", .int(statistics.malformed)),
        ]
        if let secure {
            fields += [
                ("secure_resolved", .int(secure.resolved)), ("secure_unresolved", .int(secure.unresolved)),
                ("secure_queued", .int(secure.queued)), ("secure_dropped", .int(secure.dropped)),
            ]
        }
        return JSONValue.object(fields).text
    }

    /// The closing line of a NMEA log: what it held.
    public func line(_ statistics: NMEAStream.Statistics) -> String {
        JSONValue.object([
            ("event", .string("summary")), ("nmea_lines", .int(statistics.lines)), ("fixes", .int(statistics.fixes)),
            ("malformed_skipped", .int(statistics.malformed)),
        ]).text
    }

    /// Seconds rounded for output: whole milliseconds.
    public static func roundedSeconds(_ t: Double) -> JSONValue { .double((t * 1000).rounded() / 1000) }
}
