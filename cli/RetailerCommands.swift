import Foundation
import LoyaltyAPI
import LoyaltyClient

let retailerCommand = CommandSpec(
    name: "retailer",
    summary: "For retailers: register, manage the offers on your beacons, see how they do.",
    discussion: """
        `register` needs the operator token in LOYALTY_ADMIN_TOKEN and keeps the retailer's API key in
        the config file (mode 0600). The other commands use that key, or LOYALTY_RETAILER_KEY.
        """,
    subcommands: [
        retailerRegister, retailerOffer, retailerOffers, retailerStore, retailerStats,
        retailerRotateKey,
    ])

extension ClientContext {
    /// The retailer API key: LOYALTY_RETAILER_KEY, else the config file.
    func retailerCredential() throws(ClientError) -> Credential {
        if let key = environment["LOYALTY_RETAILER_KEY"], !key.isEmpty { return .retailer(key) }
        guard let retailer = config.retailer else {
            throw .notRegistered(
                "no retailer API key: run `loyalty retailer register --name NAME`, or set LOYALTY_RETAILER_KEY"
            )
        }
        return .retailer(retailer.apiKey)
    }
}

private let retailerRegister = CommandSpec(
    name: "register",
    summary: "Register a retailer and get the proximity UUID to program into its beacons.",
    synopsis: "--name NAME [--uuid UUID]", discussion: clientDiscussion,
    options: [
        .value("name", "NAME", "The retailer's name, as shoppers see it."),
        .value("uuid", "UUID", "Claim the proximity UUID your beacons already broadcast."),
    ] + clientOptions,
    run: clientCommand { context in
        let path = context.arguments.commandPath
        guard let name = context.arguments.value("name") else {
            throw UsageError("--name is required", commandPath: path)
        }
        let uuid = try context.arguments.value("uuid", default: nil as UUID?) { UUID(uuidString: $0) }
        if let existing = context.config.retailer {
            // Registering again would overwrite the only copy of that retailer's key.
            throw ClientError.configuration(
                "\(context.home.configFile.path) already holds the key of \(existing.name): register from another LOYALTY_HOME"
            )
        }
        guard let token = context.environment["LOYALTY_ADMIN_TOKEN"], !token.isEmpty else {
            throw ClientError.notRegistered(
                "set LOYALTY_ADMIN_TOKEN to the server operator's token (loyalty-server prints where it keeps it)"
            )
        }
        let credentials = try context.api.registerRetailer(
            RetailerRegistration(name: name, uuid: uuid), .operator(token))
        var config = context.config
        config.retailer = credentials
        try context.home.saveConfig(config)
        if context.json {
            return printJSONLine([
                ("event", .string("retailer_registered")),
                ("id", .string(credentials.id.uuidString.lowercased())),
                ("name", .string(credentials.name)), ("uuid", .string(credentials.uuid.uuidString)),
            ])
        }
        printOut(
            """
            registered \(credentials.name)
            proximity UUID: \(credentials.uuid.uuidString)   (program it into your beacons)
            API key saved in \(context.home.configFile.path)
            """)
    })

private func beaconNumbers(_ context: ClientContext) throws -> (UInt16, UInt16) {
    let positionals = context.arguments.positionals
    let path = context.arguments.commandPath
    guard positionals.count == 2 else { throw UsageError("expected MAJOR MINOR", commandPath: path) }
    do {
        return (
            try Validation.beaconNumber(positionals[0], field: "major"),
            try Validation.beaconNumber(positionals[1], field: "minor")
        )
    } catch {
        throw UsageError(error.description, commandPath: path)
    }
}

private let retailerOffer = CommandSpec(
    name: "offer", summary: "Set or remove the offer at one beacon (MAJOR MINOR).",
    subcommands: [retailerOfferSet, retailerOfferRemove])

private let retailerOfferSet = CommandSpec(
    name: "set", summary: "Create or replace the offer at beacon MAJOR MINOR.",
    synopsis: "MAJOR MINOR --title T [options]",
    discussion: """
        Fields not given are cleared: the command states the whole offer. Dates are ISO 8601, e.g.
        2026-12-01T09:00:00Z.

        \(clientDiscussion)
        """,
    options: [
        .value("title", "TEXT", "What the shopper reads (1 to 200 characters)."),
        .value("description", "TEXT", "More detail."),
        .value("category", "NAME", "A label such as food or clothing; clients colour offers by it."),
        .value("image-url", "URL", "A picture of the offer."),
        .value("starts", "ISO", "Not shown before this time."),
        .value("ends", "ISO", "Not shown or redeemable from this time on."),
        .value("per-shopper-limit", "N", "Redemptions per shopper account (default 1)."),
        .value("total-limit", "N", "Redemptions across all shoppers (default unlimited)."),
        .value("reshow-after", "SECONDS", "Show again to a shopper this long after they saw it."),
    ] + clientOptions,
    run: clientCommand { context in
        let (major, minor) = try beaconNumbers(context)
        let arguments = context.arguments
        guard let title = arguments.value("title") else {
            throw UsageError("--title is required", commandPath: arguments.commandPath)
        }
        let date = { (text: String) in LoyaltyJSON.parseTimestamp(text) }
        let draft = OfferDraft(
            title: title, description: arguments.value("description"),
            category: arguments.value("category"),
            imageURL: arguments.value("image-url"),
            startsAt: try arguments.value("starts", default: nil, date),
            endsAt: try arguments.value("ends", default: nil, date),
            perShopperLimit: try arguments.value("per-shopper-limit", default: nil) { Int($0) },
            totalLimit: try arguments.value("total-limit", default: nil) { Int($0) },
            reshowAfterSeconds: try arguments.value("reshow-after", default: nil) { Int($0) })
        do throws(ValidationError) {
            try draft.validate()
        } catch {
            throw UsageError(error.description, commandPath: arguments.commandPath)
        }
        let offer = try context.api.putOffer(
            major: major, minor: minor, draft, try context.retailerCredential())
        if context.json { return printJSONLine(offerFields(offer)) }
        printOut(
            "offer at \(major):\(minor) set: \"\(offer.title)\" (id \(offer.id.uuidString.lowercased()))")
    })

private let retailerOfferRemove = CommandSpec(
    name: "rm",
    summary: "Remove the offer at beacon MAJOR MINOR (shoppers drop it at their next sync).",
    synopsis: "MAJOR MINOR", discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let (major, minor) = try beaconNumbers(context)
        try context.api.deleteOffer(major: major, minor: minor, try context.retailerCredential())
        if context.json {
            return printJSONLine([
                ("event", .string("offer_removed")), ("major", .int(Int(major))),
                ("minor", .int(Int(minor))),
            ])
        }
        printOut("offer at \(major):\(minor) removed")
    })

private func offerFields(_ offer: Offer) -> [(String, JSONValue)] {
    [
        ("id", .string(offer.id.uuidString.lowercased())), ("major", .int(Int(offer.major))),
        ("minor", .int(Int(offer.minor))), ("title", .string(offer.title)),
        ("description", jsonOptional(offer.description)), ("category", jsonOptional(offer.category)),
        ("image_url", jsonOptional(offer.imageURL)), ("starts_at", jsonTimestamp(offer.startsAt)),
        ("ends_at", jsonTimestamp(offer.endsAt)), ("per_shopper_limit", .int(offer.perShopperLimit)),
        ("total_limit", jsonOptional(offer.totalLimit)),
        ("reshow_after_s", jsonOptional(offer.reshowAfterSeconds)),
    ]
}

private let retailerOffers = CommandSpec(
    name: "offers", summary: "List your offers as the server has them.",
    discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let offers = try context.api.retailerOffers(try context.retailerCredential()).offers
        if context.json { return offers.forEach { printJSONLine(offerFields($0)) } }
        if offers.isEmpty {
            return printOut("no offers yet: `loyalty retailer offer set MAJOR MINOR --title T`")
        }
        printTable(
            ["BEACON", "TITLE", "FROM", "UNTIL", "LIMITS"],
            offers.map { offer in
                [
                    "\(offer.major):\(offer.minor)", offer.title, timestamp(offer.startsAt),
                    timestamp(offer.endsAt),
                    "\(offer.perShopperLimit)/shopper" + (offer.totalLimit.map { ", \($0) total" } ?? ""),
                ]
            })
    })

private let retailerStore = CommandSpec(
    name: "store", summary: "Set, remove or list your stores and their geofences.",
    subcommands: [retailerStoreSet, retailerStoreRemove, retailerStoreList])

private func storeID(_ context: ClientContext) throws -> String {
    let path = context.arguments.commandPath
    guard context.arguments.positionals.count == 1 else {
        throw UsageError("expected STORE_ID", commandPath: path)
    }
    do {
        return try Validation.storeID(context.arguments.positionals[0])
    } catch {
        throw UsageError(error.description, commandPath: path)
    }
}

private let retailerStoreSet = CommandSpec(
    name: "set", summary: "Create or replace store STORE_ID and its geofence.",
    synopsis: "STORE_ID --name N --lat LAT --lon LON --radius-m R",
    discussion: """
        Shoppers' devices say they are at the store within --radius-m metres (10 to 10,000) of the
        point, and sync the catalog of the retailers with a store near them.

        \(clientDiscussion)
        """,
    options: [
        .value("name", "TEXT", "The store's name, as shoppers see it."),
        .value("lat", "LAT", "Latitude in decimal degrees (-90 to 90)."),
        .value("lon", "LON", "Longitude in decimal degrees (-180 to 180)."),
        .value("radius-m", "METRES", "The geofence radius (10 to 10,000)."),
    ] + clientOptions,
    run: clientCommand { context in
        let id = try storeID(context)
        let arguments = context.arguments
        let path = arguments.commandPath
        for required in ["name", "lat", "lon", "radius-m"] where arguments.value(required) == nil {
            throw UsageError("--\(required) is required", commandPath: path)
        }
        let draft = StoreDraft(
            name: arguments.value("name") ?? "",
            latitude: try arguments.value("lat", default: 0) { Double($0) },
            longitude: try arguments.value("lon", default: 0) { Double($0) },
            radiusMetres: try arguments.value("radius-m", default: 0) { Int($0) })
        do throws(ValidationError) {
            try draft.validate()
        } catch {
            throw UsageError(error.description, commandPath: path)
        }
        let store = try context.api.putStore(id, draft, try context.retailerCredential())
        if context.json { return printJSONLine(storeFields(store)) }
        printOut(
            "store \(store.storeID) set: \(store.name) at \(store.latitude),\(store.longitude), radius \(store.radiusMetres) m"
        )
    })

private let retailerStoreRemove = CommandSpec(
    name: "rm", summary: "Remove store STORE_ID (shoppers drop it at their next sync).",
    synopsis: "STORE_ID", discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let id = try storeID(context)
        try context.api.deleteStore(id, try context.retailerCredential())
        if context.json {
            return printJSONLine([("event", .string("store_removed")), ("store_id", .string(id))])
        }
        printOut("store \(id) removed")
    })

private let retailerStoreList = CommandSpec(
    name: "list", summary: "List your stores as the server has them.",
    discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let stores = try context.api.retailerStores(try context.retailerCredential()).stores
        if context.json { return stores.forEach { printJSONLine(storeFields($0)) } }
        if stores.isEmpty {
            return printOut(
                "no stores yet: `loyalty retailer store set STORE_ID --name N --lat LAT --lon LON --radius-m R`"
            )
        }
        printTable(
            ["STORE", "NAME", "LATITUDE", "LONGITUDE", "RADIUS"],
            stores.map {
                [$0.storeID, $0.name, String($0.latitude), String($0.longitude), "\($0.radiusMetres) m"]
            })
    })

private func storeFields(_ store: RetailStore) -> [(String, JSONValue)] {
    [
        ("id", .string(store.id.uuidString.lowercased())), ("store_id", .string(store.storeID)),
        ("name", .string(store.name)), ("latitude", .double(store.latitude)),
        ("longitude", .double(store.longitude)),
        ("radius_m", .int(store.radiusMetres)),
    ]
}

private let retailerStats = CommandSpec(
    name: "stats", summary: "Per offer: shoppers who saw it, redemptions, what remains.",
    discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let statistics = try context.api.statistics(try context.retailerCredential()).offers
        if context.json {
            for entry in statistics {
                printJSONLine([
                    ("offer_id", .string(entry.offerID.uuidString.lowercased())),
                    ("major", .int(Int(entry.major))),
                    ("minor", .int(Int(entry.minor))), ("title", .string(entry.title)),
                    ("seen_by", .int(entry.seenBy)),
                    ("redemptions", .int(entry.redemptions)), ("remaining", jsonOptional(entry.remaining)),
                ])
            }
            return
        }
        printTable(
            ["BEACON", "TITLE", "SEEN BY", "REDEEMED", "REMAINING"],
            statistics.map { entry in
                [
                    "\(entry.major):\(entry.minor)", entry.title, String(entry.seenBy),
                    String(entry.redemptions),
                    entry.remaining.map(String.init) ?? "unlimited",
                ]
            })
    })

private let retailerRotateKey = CommandSpec(
    name: "rotate-key", summary: "Replace the API key; the old one works until the new one's first use (24 h at most).",
    discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let key = try context.api.rotateKey(try context.retailerCredential())
        var config = context.config
        if config.retailer != nil {
            config.retailer?.apiKey = key.apiKey
            try context.home.saveConfig(config)
        }
        if context.json {
            return printJSONLine([
                ("event", .string("key_rotated")), ("saved", .bool(config.retailer != nil)),
            ])
        }
        if config.retailer != nil {
            printOut("API key rotated; the new key is saved in \(context.home.configFile.path)")
        } else {
            // The key came from LOYALTY_RETAILER_KEY: the only place to put the new one is the screen.
            printOut("API key rotated; new key (shown once): \(key.apiKey)")
        }
    })
