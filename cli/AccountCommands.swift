import Foundation
import LoyaltyAPI
import LoyaltyClient

let accountCommand = CommandSpec(
    name: "account",
    summary: "Create this device's shopper account, show it, or link another device to it.",
    subcommands: [accountCreate, accountShow, accountLink])

private let accountCreate = CommandSpec(
    name: "create", summary: "Create an anonymous shopper account with this device in it.",
    synopsis: "[--name NAME]", discussion: clientDiscussion,
    options: [.value("name", "NAME", "A name for this device, shown by `loyalty devices`.")] + clientOptions,
    run: clientCommand { context in
        if let existing = try context.home.loadDevice() {
            throw ClientError.configuration(
                "this device already belongs to account \(existing.accountID.uuidString.lowercased()): see `loyalty account show`"
            )
        }
        let device = try context.api.createAccount(deviceName: context.arguments.value("name"))
        try context.home.saveDevice(device)
        try context.openCache().forgetCursors()
        printDevice(device, context: context, event: "account_created")
    }
)

private let accountShow = CommandSpec(
    name: "show", summary: "Show this device's account and cache (works offline).",
    discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let device = try context.home.requireDevice()
        let cache = try context.openCache()
        let fields: [(String, JSONValue)] = [
            ("account_id", .string(device.accountID.uuidString.lowercased())),
            ("device_id", .string(device.deviceID.uuidString.lowercased())),
            ("server", .string(context.api.server.absoluteString)),
            ("cached_offers", .int(try cache.offerCount)),
            ("unsent_seen", .int(try cache.outboxCount)),
            ("last_sync", jsonTimestamp(try cache.lastSync)),
            ("catalog_partial", .bool(try cache.catalogIsPartial)),
        ]
        if context.json { return printJSONLine(fields) }
        try warnIfCatalogPartial(cache, json: false)
        printOut(
            """
            account       \(device.accountID.uuidString.lowercased())
            this device   \(device.deviceID.uuidString.lowercased())
            server        \(context.api.server.absoluteString)
            cache         \(try cache.offerCount) offers, \(try cache.outboxCount) seen offers waiting to be sent, last sync \(timestamp(try cache.lastSync))
            """)
    }
)

private let accountLink = CommandSpec(
    name: "link",
    summary: "Without CODE: print a code for another device. With CODE: join the account that made it.",
    synopsis: "[CODE] [--name NAME]",
    discussion: """
        On the device that has the account, `loyalty account link` prints a single-use code such as
        K7M2-Q9XP-4HTD (valid 10 minutes). On the new device, `loyalty account link CODE` joins that
        account: offers seen on either device are then not shown again on the other. Type the code in
        either case, with or without its dashes (`loyalty account link k7m2 q9xp 4htd` works too).

        \(clientDiscussion)
        """,
    options: [.value("name", "NAME", "A name for this device (with CODE).")] + clientOptions,
    run: clientCommand { context in
        // A code typed in groups with spaces arrives as several arguments; the server ignores the spaces.
        let typed = context.arguments.positionals
        guard !typed.isEmpty else {
            let link = try context.api.createLinkCode(try context.deviceCredential().1)
            if context.json {
                return printJSONLine([("code", .string(link.code)), ("expires_at", jsonTimestamp(link.expiresAt))])
            }
            return printOut(
                "link code: \(link.code)\non the other device run: loyalty account link \(link.code)\n(expires \(timestamp(link.expiresAt)))"
            )
        }
        if let existing = try context.home.loadDevice() {
            throw ClientError.configuration(
                "this device already belongs to account \(existing.accountID.uuidString.lowercased()); to move it, remove \(context.home.deviceFile.path) first"
            )
        }
        let device = try context.api.linkDevice(
            code: typed.joined(separator: " "), deviceName: context.arguments.value("name"))
        try context.home.saveDevice(device)
        try context.openCache().forgetCursors()
        printDevice(device, context: context, event: "device_linked")
    }
)

private func printDevice(_ device: DeviceCredentials, context: ClientContext, event: String) {
    if context.json {
        return printJSONLine([
            ("event", .string(event)), ("account_id", .string(device.accountID.uuidString.lowercased())),
            ("device_id", .string(device.deviceID.uuidString.lowercased())),
        ])
    }
    printOut(
        """
        account \(device.accountID.uuidString.lowercased()), device \(device.deviceID.uuidString.lowercased())
        token saved in \(context.home.deviceFile.path); run `loyalty sync` to fetch the offers
        """)
}

let devicesCommand = CommandSpec(
    name: "devices", summary: "List the devices of this account; `devices revoke ID` signs one out.",
    synopsis: "[revoke ID]", discussion: clientDiscussion, options: clientOptions,
    run: clientCommand { context in
        let credential = try context.deviceCredential().1
        let positionals = context.arguments.positionals
        if let verb = positionals.first {
            guard verb == "revoke", positionals.count == 2 else {
                throw UsageError(
                    "expected `devices` or `devices revoke ID`", commandPath: context.arguments.commandPath)
            }
            guard let id = UUID(uuidString: positionals[1]) else {
                throw UsageError("'\(positionals[1])' is not a device id", commandPath: context.arguments.commandPath)
            }
            try context.api.revokeDevice(id, credential)
            if context.json {
                return printJSONLine([
                    ("event", .string("device_revoked")), ("device_id", .string(id.uuidString.lowercased())),
                ])
            }
            return printOut("device \(id.uuidString.lowercased()) revoked: its token no longer works")
        }
        let devices = try context.api.devices(credential).devices
        if context.json {
            for device in devices {
                printJSONLine([
                    ("id", .string(device.id.uuidString.lowercased())), ("name", jsonOptional(device.name)),
                    ("created_at", jsonTimestamp(device.createdAt)), ("revoked_at", jsonTimestamp(device.revokedAt)),
                    ("current", .bool(device.current)),
                ])
            }
            return
        }
        printTable(
            ["DEVICE", "NAME", "CREATED", "STATUS"],
            devices.map { device in
                [
                    device.id.uuidString.lowercased(), device.name ?? "-", timestamp(device.createdAt),
                    device.revokedAt.map { "revoked \(timestamp($0))" } ?? (device.current ? "this device" : "active"),
                ]
            })
    }
)
