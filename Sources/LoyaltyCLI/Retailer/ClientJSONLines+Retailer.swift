import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of the retailer's commands.
extension ClientJSONLines {
    /// `retailer register`.
    public static func retailerRegistered(_ credentials: RetailerCredentials) -> String {
        object(
            RetailerCredentials.CodingKeys.self, event: "retailer_registered",
            [.id: id(credentials.id), .name: .string(credentials.name), .uuid: .string(credentials.uuid.uuidString)])
    }

    /// `retailer key show --json`: the key, and where it came from (`config` or `LOYALTY_RETAILER_KEY`).
    static func retailerKey(_ key: String, from: String) -> String {
        object([("event", .string("retailer_key")), ("api_key", .string(key)), ("from", .string(from))])
    }

    /// `retailer key set --json`: whose key was saved, never the key.
    static func retailerKeySet(_ credentials: RetailerCredentials) -> String {
        object(
            RetailerCredentials.CodingKeys.self, event: "retailer_key_set",
            [.id: id(credentials.id), .name: .string(credentials.name), .uuid: .string(credentials.uuid.uuidString)])
    }

    /// `retailer stats --days N`, one line per day.
    public static func day(_ day: DayFigures) -> String {
        object(
            DayFigures.CodingKeys.self, event: "day",
            [
                .date: .string(day.date), .shown: .int(day.shown), .uniqueShoppers: .int(day.uniqueShoppers),
                .redeemed: .int(day.redeemed), .accepted: .int(day.accepted),
                .conversion: day.conversion.map { .double($0) } ?? .null,
            ])
    }

    /// `retailer stats --days N`, one line per beacon.
    public static func beacon(_ beacon: BeaconHealth) -> String {
        object(
            BeaconHealth.CodingKeys.self, event: "beacon",
            [
                .major: .int(Int(beacon.major)), .minor: .int(Int(beacon.minor)),
                .lastHeardAt: timestamp(beacon.lastHeardAt), .checkBattery: .bool(beacon.checkBattery),
            ])
    }

    /// `retailer beacon list`, one line per beacon: the fleet page's entry as the API answers it.
    public static func fleetBeacon(_ beacon: FleetBeacon) -> String {
        typealias TLM = BeaconTelemetry.CodingKeys
        let telemetry = beacon.telemetry.map { tlm in
            JSONValue.object(
                [
                    (TLM.batteryMillivolts, optional(tlm.batteryMillivolts)),
                    (TLM.temperature, tlm.temperature.map { .double($0) } ?? .null),
                    (TLM.advertisingCount, tlm.advertisingCount.map { .int(Int($0)) } ?? .null),
                    (TLM.uptimeSeconds, tlm.uptimeSeconds.map { .double($0) } ?? .null),
                    (TLM.heardAt, timestamp(tlm.heardAt)), (TLM.lowBattery, .bool(tlm.lowBattery)),
                ].map { ($0.0.stringValue, $0.1) })
        }
        return object(
            FleetBeacon.CodingKeys.self, event: "beacon",
            [
                .major: .int(Int(beacon.major)), .minor: .int(Int(beacon.minor)), .name: optional(beacon.name),
                .placement: optional(beacon.placement), .storeID: optional(beacon.storeID), .secure: .bool(beacon.secure),
                .telemetry: telemetry ?? .null, .offerID: beacon.offerID.map(id) ?? .null, .title: optional(beacon.title),
                .category: optional(beacon.category), .lastHeardAt: timestamp(beacon.lastHeardAt),
                .sightings: .int(beacon.sightings.reduce(0) { $0 + $1.sightings }), .quiet: .bool(beacon.quiet),
                .note: optional(beacon.note),
            ])
    }

    /// `retailer beacon secure --beacon-public-key`.
    public static func beaconRegistered(_ registration: EIDRegistration) -> String {
        object(
            EIDRegistration.CodingKeys.self, event: "beacon_registered",
            [
                .major: .int(Int(registration.major)), .minor: .int(Int(registration.minor)),
                .exponent: .int(Int(registration.exponent)), .form: .string(registration.form.rawValue),
                .uuid: .string(registration.uuid.uuidString), .counter: .int(Int(registration.counter)),
                .counterAt: timestamp(registration.counterAt), .servicePublicKey: .string(registration.servicePublicKey),
            ])
    }

    /// `retailer beacon secure`: the document, with the identity key only when no file holds it.
    public static func beaconSecured(_ provisioning: BeaconProvisioning, savedIn path: String?) -> String {
        var fields: [(String, JSONValue)] = [
            ("event", .string("beacon_secured")), ("major", .int(Int(provisioning.major))),
            ("minor", .int(Int(provisioning.minor))), ("exponent", .int(Int(provisioning.exponent))),
            ("form", .string(provisioning.form.rawValue)), ("uuid", .string(provisioning.uuid.uuidString)),
            ("counter", .int(Int(provisioning.counter))), ("counter_at", timestamp(provisioning.counterAt)),
        ]
        fields.append(path.map { ("file", .string($0)) } ?? ("identity_key", .string(provisioning.identityKey)))
        return object(fields)
    }

    /// `retailer till-key create`.
    public static func tillKeyCreated(_ key: TillKeyCredentials) -> String {
        object(
            TillKeyCredentials.CodingKeys.self, event: "till_key_created",
            [.id: id(key.id), .name: .string(key.name), .tillKey: .string(key.tillKey)])
    }

    /// `retailer till-key list`, one line per key.
    public static func tillKey(_ key: TillKey) -> String {
        object(
            TillKey.CodingKeys.self,
            [
                .id: id(key.id), .name: .string(key.name), .createdAt: timestamp(key.createdAt),
                .revokedAt: timestamp(key.revokedAt),
            ])
    }

    /// `retailer offers import`.
    public static func offersImported(_ result: OfferImportResult) -> String {
        object([
            ("event", .string("offers_imported")), ("created", .int(result.created)),
            ("updated", .int(result.updated)), ("unchanged", .int(result.unchanged)),
        ])
    }

    /// `retailer offers` and `retailer offer set`.
    public static func offer(_ offer: Offer) -> String {
        object(
            Offer.CodingKeys.self,
            [
                .id: id(offer.id), .major: .int(Int(offer.major)), .minor: .int(Int(offer.minor)),
                .title: .string(offer.title), .description: optional(offer.description),
                .category: optional(offer.category), .imageURL: optional(offer.imageURL),
                .startsAt: timestamp(offer.startsAt), .endsAt: timestamp(offer.endsAt),
                .perShopperLimit: .int(offer.perShopperLimit), .totalLimit: optional(offer.totalLimit),
                .reshowAfterSeconds: optional(offer.reshowAfterSeconds), .schedule: optional(offer.schedule),
                .showsPerDay: optional(offer.showsPerDay),
            ])
    }

    /// `retailer store list` and `retailer store set`.
    public static func store(_ store: RetailStore) -> String {
        object(
            RetailStore.CodingKeys.self,
            [
                .id: id(store.id), .storeID: .string(store.storeID), .name: .string(store.name),
                .latitude: .double(store.latitude), .longitude: .double(store.longitude),
                .radiusMetres: .int(store.radiusMetres),
            ])
    }

    /// `retailer stats`, one line per offer.
    public static func statistics(_ entry: OfferStatistics) -> String {
        object(
            OfferStatistics.CodingKeys.self,
            [
                .offerID: id(entry.offerID), .major: .int(Int(entry.major)), .minor: .int(Int(entry.minor)),
                .title: .string(entry.title), .seenBy: .int(entry.seenBy), .verifiedBy: .int(entry.verifiedBy),
                .claimedBy: .int(entry.claimedBy), .redemptions: .int(entry.redemptions),
                .accepted: .int(entry.accepted), .remaining: optional(entry.remaining),
            ])
    }

    /// `retailer offer rm --json`.
    public static func offerRemoved(major: UInt16, minor: UInt16) -> String {
        object([("event", .string("offer_removed")), ("major", .int(Int(major))), ("minor", .int(Int(minor)))])
    }

    /// `retailer store rm --json`.
    public static func storeRemoved(_ storeID: String) -> String {
        object([("event", .string("store_removed")), ("store_id", .string(storeID))])
    }

    /// `retailer till-key revoke --json`.
    public static func tillKeyRevoked(_ keyID: UUID) -> String {
        object([("event", .string("till_key_revoked")), ("id", .string(keyID.uuidString.lowercased()))])
    }

    /// `retailer rotate-key --json`: whether the new key is in the config file (else it was printed).
    public static func keyRotated(saved: Bool) -> String {
        object([("event", .string("key_rotated")), ("saved", .bool(saved))])
    }
}
