import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// What the retailer commands print. Text the server
/// sent is escaped for the terminal.
extension ClientText {
    /// `retailer offer set`.
    public static func offerSet(_ offer: Offer) -> String {
        "offer at \(offer.major):\(offer.minor) set: \"\(TerminalText.escaped(offer.title))\" (id \(offer.id.uuidString.lowercased()))"
    }

    /// `retailer store set`.
    public static func storeSet(_ store: RetailStore) -> String {
        "store \(TerminalText.escaped(store.storeID)) set: \(TerminalText.escaped(store.name)) at \(store.latitude),\(store.longitude), radius \(store.radiusMetres) m"
    }

    /// `retailer till-key create`: the key, shown only this once.
    public static func tillKeyCreated(_ key: TillKeyCredentials) -> String {
        """
        till key for \(TerminalText.escaped(key.name)) (id \(key.id.uuidString.lowercased())), shown only now:
        \(key.tillKey)
        """
    }

    /// `retailer beacon secure`: where the document went, or the document itself (its key shown only now).
    public static func beaconSecured(_ provisioning: BeaconProvisioning, savedIn path: String?) -> String {
        let beacon =
            "beacon \(provisioning.major):\(provisioning.minor) is secure (\(provisioning.form.rawValue), a new "
            + "identifier every 2^\(provisioning.exponent) s)"
        if let path { return "\(beacon); its provisioning document, with the identity key, is in \(path) (mode 0600)" }
        return """
            \(beacon); its identity key is shown only now:
            identity key  \(provisioning.identityKey)
            exponent      \(provisioning.exponent)
            form          \(provisioning.form.rawValue)
            uuid          \(provisioning.uuid.uuidString)
            counter       \(provisioning.counter) at \(LoyaltyJSON.formatTimestamp(provisioning.counterAt))
            """
    }

    /// `retailer beacon secure --beacon-public-key`: accepted, no key shown.
    public static func beaconRegistered(_ registration: EIDRegistration) -> String {
        "beacon \(registration.major):\(registration.minor) is secure by key exchange (\(registration.form.rawValue), "
            + "a new identifier every 2^\(registration.exponent) s): its first EID matched; its counter was "
            + "\(registration.counter) at \(LoyaltyJSON.formatTimestamp(registration.counterAt))"
    }

    /// `retailer rotate-key`: a key from LOYALTY_RETAILER_KEY is not saved (`savedIn` nil), so the only
    /// place to put the new one is the screen.
    public static func keyRotated(_ key: String, savedIn path: String?) -> String {
        if let path { return "API key rotated; the new key is saved in \(path)" }
        return "API key rotated; new key (shown once): \(key)"
    }

    /// `retailer offers`.
    public static func retailerOffers(_ offers: [Offer]) -> String {
        table(
            ["BEACON", "TITLE", "FROM", "UNTIL", "LIMITS", "HOURS"],
            offers.map { offer in
                [
                    "\(offer.major):\(offer.minor)", offer.title, timestamp(offer.startsAt),
                    timestamp(offer.endsAt),
                    "\(offer.perShopperLimit)/shopper" + (offer.totalLimit.map { ", \($0) total" } ?? "")
                        + (offer.showsPerDay.map { ", shown \($0)/day" } ?? ""),
                    offer.schedule ?? "always",
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
            ["BEACON", "TITLE", "SEEN BY", "VERIFIED", "CLAIMED", "REDEEMED", "ACCEPTED", "REMAINING"],
            statistics.map { entry in
                [
                    "\(entry.major):\(entry.minor)", entry.title, String(entry.seenBy), String(entry.verifiedBy),
                    String(entry.claimedBy),
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

    /// `retailer beacon list`: one row per beacon, then what to check.
    public static func fleet(_ fleet: BeaconFleet) -> String {
        let rows = fleet.beacons.map { beacon in
            let telemetry = beacon.telemetry
            return [
                "\(beacon.major):\(beacon.minor)", beacon.name ?? "", beacon.storeID ?? "", beacon.secure ? "yes" : "no",
                beacon.title ?? "", timestamp(beacon.lastHeardAt),
                String(beacon.sightings.reduce(0) { $0 + $1.sightings }),
                telemetry?.batteryMillivolts.map { "\($0) mV" + (telemetry?.lowBattery == true ? " LOW" : "") } ?? "",
                telemetry?.temperature.map { String(format: "%.1f °C", $0) } ?? "",
                telemetry?.uptimeSeconds.map(uptime) ?? "",
            ]
        }
        let notes = fleet.beacons.compactMap { beacon in beacon.note.map { "\(beacon.major):\(beacon.minor)  \($0)" } }
        return table(
            ["BEACON", "NAME", "STORE", "SECURE", "OFFER", "LAST HEARD", "SIGHTINGS \(fleet.days)D", "BATTERY", "TEMP",
             "UPTIME"], rows)
            + (notes.isEmpty ? "" : "\n" + notes.map(TerminalText.escaped).joined(separator: "\n") + "\n")
    }

    /// `3d 4h`, `5h 12m`, `40s`: a beacon's time since power-up.
    static func uptime(_ seconds: Double) -> String {
        let whole = Int(seconds)
        let (days, hours, minutes) = (whole / 86_400, whole % 86_400 / 3600, whole % 3600 / 60)
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        return minutes > 0 ? "\(minutes)m" : "\(whole)s"
    }

    /// `retailer till-key list`.
    public static func tillKeys(_ keys: [TillKey]) -> String {
        table(
            ["ID", "NAME", "CREATED", "REVOKED"],
            keys.map { [$0.id.uuidString.lowercased(), $0.name, timestamp($0.createdAt), timestamp($0.revokedAt)] })
    }

    /// `retailer register`: the proximity UUID to program into the beacons.
    public static func retailerRegistered(_ credentials: RetailerCredentials, savedIn path: String) -> String {
        """
        registered \(TerminalText.escaped(credentials.name))
        proximity UUID: \(credentials.uuid.uuidString)   (program it into your beacons)
        API key saved in \(path)
        """
    }
}

