import Beacons
import Foundation
import Geofencing
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// `2026-01-31T09:00:00Z`, or `-` for none.
public func timestamp(_ date: Date?) -> String {
    date.map(LoyaltyJSON.formatTimestamp) ?? "-"
}

/// What the client commands print on a terminal (without --json): tables and sentences, as text.
public enum ClientText {
    /// Rows of text columns, padded to line up, each line ending in a newline, trailing spaces dropped;
    /// text from the server shows its control characters as codes.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(TerminalText.escaped) }
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var out = ""
        for row in [header] + rows {
            out +=
                zip(row, widths).map { $0.padded($1) }.joined(separator: "  ")
                .replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }
        return out
    }

    /// `retailer offers`.
    public static func retailerOffers(_ offers: [Offer]) -> String {
        table(
            ["BEACON", "TITLE", "FROM", "UNTIL", "LIMITS"],
            offers.map { offer in
                [
                    "\(offer.major):\(offer.minor)", offer.title, timestamp(offer.startsAt),
                    timestamp(offer.endsAt),
                    "\(offer.perShopperLimit)/shopper" + (offer.totalLimit.map { ", \($0) total" } ?? ""),
                ]
            })
    }

    /// `retailer store list`.
    public static func stores(_ stores: [RetailStore]) -> String {
        table(
            ["STORE", "NAME", "LATITUDE", "LONGITUDE", "RADIUS"],
            stores.map {
                [$0.storeID, $0.name, String($0.latitude), String($0.longitude), "\($0.radiusMetres) m"]
            })
    }

    /// `retailer stats`: one row per offer.
    public static func statistics(_ statistics: [OfferStatistics]) -> String {
        table(
            ["BEACON", "TITLE", "SEEN BY", "REDEEMED", "ACCEPTED", "REMAINING"],
            statistics.map { entry in
                [
                    "\(entry.major):\(entry.minor)", entry.title, String(entry.seenBy),
                    String(entry.redemptions), String(entry.accepted),
                    entry.remaining.map(String.init) ?? "unlimited",
                ]
            })
    }

    /// `retailer stats --days N`: all offers, per day.
    public static func figures(_ figures: RetailerFigures) -> String {
        "\nall offers, the last \(figures.days) days (UTC):\n"
            + table(
                ["DAY", "SHOWN", "SHOPPERS", "REDEEMED", "ACCEPTED", "CONVERSION"],
                figures.total.map { day in
                    [
                        day.date, String(day.shown), String(day.uniqueShoppers), String(day.redeemed),
                        String(day.accepted), day.conversion.map { String(format: "%.0f%%", $0 * 100) } ?? "-",
                    ]
                })
    }

    /// `retailer stats --days N`: the beacons unheard for N days.
    public static func beaconHealth(_ health: BeaconHealthList) -> String {
        let quiet = health.beacons.filter(\.checkBattery)
        let line = "\n\(quiet.count) of \(health.beacons.count) beacons unheard for \(health.quietDays) days\n"
        guard !quiet.isEmpty else { return line }
        return line
            + table(
                ["BEACON", "TITLE", "LAST HEARD", "CHECK"],
                quiet.map { ["\($0.major):\($0.minor)", $0.title, timestamp($0.lastHeardAt), "check its battery"] })
    }

    /// `retailer till-key list`.
    public static func tillKeys(_ keys: [TillKey]) -> String {
        table(
            ["ID", "NAME", "CREATED", "REVOKED"],
            keys.map { [$0.id.uuidString.lowercased(), $0.name, timestamp($0.createdAt), timestamp($0.revokedAt)] })
    }

    /// `till check|accept`: the answer, or with `refusal` the reason a checked code must not be honoured.
    public static func till(_ answer: TillCode, accepted: Bool) -> (line: String, refused: Bool) {
        let code = TerminalText.escaped(answer.code)
        let offer =
            "\"\(TerminalText.escaped(answer.title))\" (\(answer.major):\(answer.minor)), redeemed \(timestamp(answer.redeemedAt))"
        switch (accepted, answer.status) {
        case (true, _): return ("accepted \(code): \(offer)", false)
        case (false, .valid): return ("\(code) is valid: \(offer)", false)
        case (false, .accepted):
            // Checking a used code is a refusal too: the cashier must not hand the offer over again.
            let till = TerminalText.escaped(answer.acceptedTill ?? "")
            return ("\(code) was used at \(timestamp(answer.acceptedAt)) at the till \"\(till)\": \(offer)", true)
        }
    }

    /// `offers`: the cached offers, whether this account has seen each, and their window judged at `now`
    /// (server time, as the scan judges windows).
    public static func cachedOffers(_ offers: [ResolvedOffer], seen: [UUID: Date], now: Date) -> String {
        table(
            ["RETAILER", "BEACON", "TITLE", "UNTIL", "SEEN", "ID"],
            offers.map { resolved in
                let offer = resolved.offer
                let until =
                    if let starts = offer.startsAt, now < starts { "starts \(timestamp(starts))" }
                    else if let ends = offer.endsAt, ends <= now { "ended \(timestamp(ends))" }
                    else { timestamp(offer.endsAt) }
                return [
                    resolved.retailer.name, "\(resolved.offer.major):\(resolved.offer.minor)", resolved.offer.title,
                    until, seen[resolved.offer.id] == nil ? "no" : "yes",
                    resolved.offer.id.uuidString.lowercased(),
                ]
            })
    }

    /// `sync`'s closing line.
    public static func synced(_ report: SyncReport) -> String {
        let catalog =
            if !report.catalogChanged {
                "catalog unchanged"
            } else if report.fullCatalog {
                "full catalog of \(report.offersReceived) offers"
            } else {
                "\(report.offersReceived) offers changed, \(report.offersRemoved) removed"
            }
        return
            "synced: sent \(report.pushed) seen offers; \(catalog); \(report.seenPulled) seen offers from the account; \(report.cachedOffers) offers cached"
    }

    /// The progress line `sync` keeps on a terminal.
    public static func progress(_ progress: SyncProgress) -> String {
        switch progress {
        case .pushingSeen(let sent): "sending seen offers: \(sent)"
        case .fetchingCatalog: "fetching the catalog..."
        case .storingOffers(let stored): "storing offers: \(stored)"
        case .pullingSeen: "fetching the account's seen offers..."
        }
    }

    /// `devices`.
    public static func devices(_ devices: [Device]) -> String {
        table(
            ["DEVICE", "NAME", "CREATED", "STATUS"],
            devices.map { device in
                [
                    device.id.uuidString.lowercased(), device.name ?? "-", timestamp(device.createdAt),
                    device.revokedAt.map { "revoked \(timestamp($0))" } ?? (device.current ? "this device" : "active"),
                ]
            })
    }

    /// `account show`: the server is the one the account lives on (`saved`: the config's), unless --server
    /// or LOYALTY_SERVER says otherwise; the line says which, and the saved one when it differs.
    public static func account(
        _ device: DeviceCredentials, server: (url: URL, source: ClientConfig.ServerSource), saved: String?,
        cache: OfferCache
    ) throws(ClientError) -> String {
        """
        account       \(device.accountID.uuidString.lowercased())
        this device   \(device.deviceID.uuidString.lowercased())
        server        \(serverInUse(server.url.absoluteString, server.source, saved: saved))
        cache         \(try cache.offerCount) offers, \(try cache.outboxCount) seen offers waiting to be sent, last sync \(timestamp(try cache.lastSync))
        """
    }

    /// The warning when a scan's sync fails: the error and what the scan does without the server.
    public static func syncFailed(_ error: ClientError, syncing: ScanSync) -> String {
        let consequence =
            switch syncing {
            case .offers: "offers come from the cache, seen offers wait in the outbox"
            case .area: "stores come from the cache"
            }
        return "warning: \(error.description); \(consequence)"
    }

    /// The closing line of a replay or a live scan (`live`: its records are the radio's events).
    public static func summary(_ statistics: CaptureStatistics, live: Bool) -> String {
        "\(live ? "heard" : "replayed") \(statistics.records) \(live ? "events" : "records"): "
            + "\(statistics.advertisingReports) advertising reports, "
            + "\(statistics.beaconFrames) beacon frames, \(statistics.malformed) malformed events skipped"
    }

    /// The closing line of a NMEA log's replay.
    public static func summary(_ statistics: NMEAStream.Statistics) -> String {
        "replayed \(statistics.lines) NMEA lines: \(statistics.fixes) fixes, \(statistics.malformed) malformed lines skipped"
    }

    /// `beacon calibrate`'s report.
    public static func calibration(
        _ calibration: MeasuredPowerCalibration, of identity: BeaconIdentity, advertised: Int8?, seconds: Double
    ) -> String {
        var text = """
            measured power to program: \(calibration.measuredPower) dBm
              mean RSSI \(String(format1: calibration.meanRSSI)) dBm, median \(String(format1: calibration.medianRSSI)) dBm, \
            spread ±\(String(format1: calibration.standardDeviation)) dB (standard deviation)
              \(calibration.samplesUsed) samples used, \(calibration.samplesRejected) rejected as outliers, \
            over \(String(format1: seconds)) s
            """
        if let advertised {
            text += "\n  \(identity) advertises \(advertised) dBm now"
        }
        return text
    }
}

extension String {
    /// Padded with spaces to `width` characters.
    fileprivate func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
