import Arguments
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

let retailerCommand = Command(
    name: "retailer",
    summary: "For retailers: register, manage the offers on your beacons, see how they do.",
    discussion: """
        `register` needs the operator token in LOYALTY_ADMIN_TOKEN and keeps the retailer's API key in
        the config file (mode 0600). The other commands use that key, or LOYALTY_RETAILER_KEY.
        """,
    subcommands: [
        retailerRegister, retailerOffer, retailerOffers, retailerStore, retailerStatsCommand,
        retailerRotateKey, retailerKey, retailerTillKeyCommand, retailerBeaconCommand,
    ])

extension ClientContext {
    /// The API key to send to this command's server (only the one that issued the config's key).
    func retailerCredential() throws(ClientError) -> Credential {
        try config.retailerCredential(environment: environment, sendingTo: api.server)
    }
}

/// Checked by the registration's own rules as they are parsed.
private enum Register {
    static let name = Option<String>(
        "name", value: "NAME", help: "The retailer's name, as shoppers see it.", required: true
    ) { text in
        try InvalidValue.checking { () throws(ValidationError) in try RetailerRegistration(name: text).validate() }
        return text
    }
    static let uuid = Option<UUID>.uuid("uuid", help: "Claim the proximity UUID your beacons already broadcast.") {
        uuid throws(InvalidValue) in
        // With a name that passes, only the UUID's rule (not the all-zero UUID) can refuse.
        try InvalidValue.checking { () throws(ValidationError) in
            try RetailerRegistration(name: "-", uuid: uuid).validate()
        }
    }
}

private let retailerRegister = Command(
    name: "register",
    summary: "Register a retailer and get the proximity UUID to program into its beacons.",
    discussion: clientDiscussion,
    options: [Register.name, Register.uuid] + ClientOptions.all,
    run: clientCommand { context in
        let registration = RetailerRegistration(
            name: context.arguments.required(Register.name), uuid: context.arguments.value(Register.uuid))
        let credentials = try context.home.registerRetailer(
            context.api, registration,
            operatorToken: context.environment["LOYALTY_ADMIN_TOKEN"])
        context.output.emit(
            text: ClientText.retailerRegistered(credentials, savedIn: context.home.configFile.path),
            json: ClientJSONLines.retailerRegistered(credentials))
    })

/// A beacon's MAJOR and MINOR, the words of `retailer offer set` and `rm`.
enum BeaconNumbers {
    static let major = number("MAJOR")
    static let minor = number("MINOR")

    private static func number(_ name: String) -> Positional<UInt16> {
        Positional(name) { text in try InvalidValue.checking { () throws(ValidationError) in try Validation.beaconNumber(text, field: name) } }
    }

    static func read(_ context: ClientContext) -> (UInt16, UInt16) {
        (context.arguments.word(major)!, context.arguments.word(minor)!)
    }
}

private let retailerOffer = Command(
    name: "offer", summary: "Set or remove the offer at one beacon (MAJOR MINOR).",
    subcommands: [retailerOfferSet, retailerOfferRemove])

private enum OfferFields {
    static let description = Option<String>("description", value: "TEXT", help: "More detail.")
    static let category = Option<String>(
        "category", value: "NAME", help: "A label such as food or clothing; clients colour offers by it.")
    static let imageURL = Option<String>("image-url", value: "URL", help: "A picture of the offer.")
    static let title = Option<String>(
        "title", value: "TEXT", help: "What the shopper reads (1 to 200 characters).", required: true)
    static let starts = Option<Date>(
        "starts", value: "ISO", help: "Not shown before this time.", expected: Self.timestamp,
        parse: LoyaltyJSON.parseTimestamp)
    static let ends = Option<Date>(
        "ends", value: "ISO", help: "Not shown or redeemable from this time on.", expected: Self.timestamp,
        parse: LoyaltyJSON.parseTimestamp)
    static let perShopperLimit = Option<Int>(
        "per-shopper-limit", value: "N", help: "Redemptions per shopper account (default 1).",
        expected: "a whole number") { Int($0) }
    static let totalLimit = Option<Int>(
        "total-limit", value: "N", help: "Redemptions across all shoppers (default unlimited).",
        expected: "a whole number") { Int($0) }
    static let reshowAfter = Option<Int>(
        "reshow-after", value: "SECONDS", help: "Show again to a shopper this long after they saw it.",
        expected: "a whole number of seconds") { Int($0) }
    static let schedule = Option<String>(
        "schedule", value: "HOURS",
        help: "Weekly hours in the store's time zone, e.g. 'Europe/London: weekdays 17:00-19:00, sat 10:00-12:00'.")
    static let showsPerDay = Option<Int>(
        "shows-per-day", value: "N",
        help: "Show it to a shopper up to N times a day (1 to 100, UTC days; default once ever).",
        expected: "a whole number from 1 to 100") { Int($0) }
    private static let timestamp = "an ISO 8601 time such as 2026-12-01T09:00:00Z"

    static let all: [any DeclaredOption] = [
        title, description, category, imageURL, starts, ends, perShopperLimit, totalLimit, reshowAfter, schedule,
        showsPerDay,
    ]
}

private let retailerOfferSet = Command(
    name: "set", summary: "Create or replace the offer at beacon MAJOR MINOR.",
    discussion: """
        Fields not given are cleared: the command states the whole offer. Dates are ISO 8601, e.g.
        2026-12-01T09:00:00Z.

        --schedule 'ZONE: DAYS HH:MM-HH:MM[, DAYS HH:MM-HH:MM]' puts the offer on only in those hours of
        the week, in the store's time zone ZONE (an IANA name this machine knows, such as Europe/London):
        DAYS is daily, weekdays, weekends, a day (mon ... sun) or a span (mon-fri); an end before the start
        runs past midnight. Outside its hours a scan does not show the offer and the server refuses to
        redeem it (409 offer_out_of_hours).

        --shows-per-day N lets a scan show the offer again, up to N times a day per shopper account (counted
        on all its devices, days in UTC): again when its beacon comes near anew, or --reshow-after SECONDS
        after the last show. Without it the offer shows once ever.

        \(clientDiscussion)
        """,
    options: OfferFields.all + ClientOptions.all, positionals: [BeaconNumbers.major, BeaconNumbers.minor],
    run: clientCommand { context in
        let (major, minor) = BeaconNumbers.read(context)
        let arguments = context.arguments
        let draft = OfferDraft(
            title: arguments.required(OfferFields.title), description: arguments.value(OfferFields.description),
            category: arguments.value(OfferFields.category), imageURL: arguments.value(OfferFields.imageURL),
            startsAt: arguments.value(OfferFields.starts), endsAt: arguments.value(OfferFields.ends),
            perShopperLimit: arguments.value(OfferFields.perShopperLimit),
            totalLimit: arguments.value(OfferFields.totalLimit),
            reshowAfterSeconds: arguments.value(OfferFields.reshowAfter), schedule: arguments.value(OfferFields.schedule),
            showsPerDay: arguments.value(OfferFields.showsPerDay))
        try arguments.checked { try draft.validate() }
        let offer = try context.api.putOffer(
            major: major, minor: minor, draft, try context.retailerCredential())
        context.output.emit(text: ClientText.offerSet(offer), json: ClientJSONLines.offer(offer))
    })

private let retailerOfferRemove = Command(
    name: "rm",
    summary: "Remove the offer at beacon MAJOR MINOR (shoppers drop it at their next sync).",
    discussion: clientDiscussion, options: ClientOptions.all,
    positionals: [BeaconNumbers.major, BeaconNumbers.minor],
    run: clientCommand { context in
        let (major, minor) = BeaconNumbers.read(context)
        try context.api.deleteOffer(major: major, minor: minor, try context.retailerCredential())
        context.output.emit(
            text: "offer at \(major):\(minor) removed",
            json: ClientJSONLines.offerRemoved(major: major, minor: minor))
    })

private let retailerOffers = Command(
    name: "offers", summary: "List your offers as the server has them; import or export them as CSV.",
    discussion: clientDiscussion, options: ClientOptions.all,
    subcommands: [retailerOffersImportCommand, retailerOffersExportCommand],
    run: clientCommand { context in
        let offers = try context.api.retailerOffers(try context.retailerCredential()).offers
        context.output.emit(
            text: offers.isEmpty
                ? "no offers yet: `loyalty retailer offer set MAJOR MINOR --title T`" : ClientText.retailerOffers(offers),
            jsonLines: offers.map(ClientJSONLines.offer))
    })

private let retailerStore = Command(
    name: "store", summary: "Set, remove or list your stores and their geofences.",
    subcommands: [retailerStoreSet, retailerStoreRemove, retailerStoreList])

private let storeIDWord = Positional("STORE_ID") { text in
    try InvalidValue.checking { () throws(ValidationError) in try Validation.storeID(text) }
}

private enum StoreFields {
    static let name = Option<String>("name", value: "TEXT", help: "The store's name, as shoppers see it.", required: true)
    static let latitude = Option<Double>(
        "lat", value: "LAT", help: "Latitude in decimal degrees (-90 to 90).", required: true,
        expected: "a number of degrees") { Double($0) }
    static let longitude = Option<Double>(
        "lon", value: "LON", help: "Longitude in decimal degrees (-180 to 180).", required: true,
        expected: "a number of degrees") { Double($0) }
    static let radius = Option<Int>(
        "radius-m", value: "METRES", help: "The geofence radius (10 to 10,000).", required: true,
        expected: "a whole number of metres") { Int($0) }

    static let all: [any DeclaredOption] = [name, latitude, longitude, radius]
}

private let retailerStoreSet = Command(
    name: "set", summary: "Create or replace store STORE_ID and its geofence.",
    discussion: """
        Shoppers' devices say they are at the store within --radius-m metres (10 to 10,000) of the
        point, and sync the catalog of the retailers with a store near them.

        \(clientDiscussion)
        """,
    options: StoreFields.all + ClientOptions.all, positionals: [storeIDWord],
    run: clientCommand { context in
        let id = context.arguments.word(storeIDWord)!
        let arguments = context.arguments
        let draft = StoreDraft(
            name: arguments.required(StoreFields.name), latitude: arguments.required(StoreFields.latitude),
            longitude: arguments.required(StoreFields.longitude), radiusMetres: arguments.required(StoreFields.radius))
        try arguments.checked { try draft.validate() }
        let store = try context.api.putStore(id, draft, try context.retailerCredential())
        context.output.emit(text: ClientText.storeSet(store), json: ClientJSONLines.store(store))
    })

private let retailerStoreRemove = Command(
    name: "rm", summary: "Remove store STORE_ID (shoppers drop it at their next sync).",
    discussion: clientDiscussion, options: ClientOptions.all, positionals: [storeIDWord],
    run: clientCommand { context in
        let id = context.arguments.word(storeIDWord)!
        try context.api.deleteStore(id, try context.retailerCredential())
        context.output.emit(text: "store \(id) removed", json: ClientJSONLines.storeRemoved(id))
    })

private let retailerStoreList = Command(
    name: "list", summary: "List your stores as the server has them.",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        let stores = try context.api.retailerStores(try context.retailerCredential()).stores
        context.output.emit(
            text: stores.isEmpty
                ? "no stores yet: `loyalty retailer store set STORE_ID --name N --lat LAT --lon LON --radius-m R`"
                : ClientText.stores(stores),
            jsonLines: stores.map(ClientJSONLines.store))
    })

private let retailerRotateKey = Command(
    name: "rotate-key", summary: "Replace the API key; the old one works until the new one's first use (24 h at most).",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        let (key, saved) = try context.home.rotateRetailerKey(context.api, environment: context.environment)
        context.output.emit(
            text: ClientText.keyRotated(key, savedIn: saved ? context.home.configFile.path : nil),
            json: ClientJSONLines.keyRotated(saved: saved))
    })

private let retailerKey = Command(
    name: "key", summary: "Print the retailer API key, or set one (a key rotated in the console, say).",
    subcommands: [retailerKeyShow, retailerKeySet])

private let retailerKeyShow = Command(
    name: "show", summary: "Print the API key in use: LOYALTY_RETAILER_KEY, else the config file's.",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        // Printed, not sent: whatever server the command names.
        guard case .retailer(let key) = try context.config.retailerCredential(environment: context.environment) else { return }
        let from = (context.environment["LOYALTY_RETAILER_KEY"] ?? "").isEmpty ? "config" : "LOYALTY_RETAILER_KEY"
        context.output.emit(text: key, json: ClientJSONLines.retailerKey(key, from: from))
    })

private let keyWord = Positional("KEY", .optional)

private let retailerKeySet = Command(
    name: "set",
    summary: "Keep an API key in the config file (0600) once the server says whose it is.",
    discussion: """
        Without KEY, the key is read from standard input: on a terminal it is asked for and not echoed,
        so it stays out of the shell's history and the terminal (`loyalty retailer key set < key.txt` works
        too). The key is checked with the server first: one it refuses is not saved (exit 77). The server
        used is saved with it. A config holding another retailer's key refuses to replace it.

        \(clientDiscussion)
        """,
    options: ClientOptions.all, positionals: [keyWord],
    run: clientCommand { context in
        let typed = context.arguments.word(keyWord) ?? readSecretLine(prompt: "API key: ", context.output) ?? ""
        let key = typed.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty else { throw context.arguments.usageError("no API key: give KEY, or type it when asked") }
        let credentials = try context.home.setRetailerKey(context.api, key: key)
        context.output.emit(
            text: "API key of \(TerminalText.escaped(credentials.name)) saved in \(context.home.configFile.path)",
            json: ClientJSONLines.retailerKeySet(credentials))
    })

/// A line of standard input; on a terminal, asked for with `prompt` on standard error and not echoed (the
/// terminal's settings come back after, and before a second Ctrl-C ends the process).
private func readSecretLine(prompt: String, _ output: CommandOutput) -> String? {
    var original = termios()
    guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &original) == 0 else { return readLine() }
    var quiet = original
    quiet.c_lflag &= ~tcflag_t(ECHO)
    let restore = { @Sendable [original] in
        var settings = original
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }
    Interruption.process.restores(restore)
    // Echo off before the prompt: what is typed as soon as the prompt shows is not echoed.
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
    output.error(prompt, newline: false)
    defer {
        restore()
        output.error("")
    }
    return readLine()
}
