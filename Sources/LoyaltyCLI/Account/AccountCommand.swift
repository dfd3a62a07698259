import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private enum Account {
    static let name = Option<String>("name", value: "NAME", help: "A name for this device, shown by `loyalty devices`.")
    static let linkName = Option<String>("name", value: "NAME", help: "A name for this device (with CODE).")
    static let replace = Flag(
        "replace", help: "With CODE: leave the account this device has (revoked, say) for the code's account.")
    /// A code typed in groups with spaces arrives as several words; the server ignores the spaces.
    static let code = Positional("CODE", .zeroOrMore)
    static let device = Positional("ID", expected: "a device id (see `loyalty devices`)") { UUID(uuidString: $0) }
    static let yes = Flag("yes", help: "Revoke the device you are on without asking.")
}

let accountCommand = Command(
    name: "account",
    summary: "Create this device's shopper account, show it, link another device, export or delete it.",
    subcommands: [accountCreate, accountShow, accountLink, accountExport, accountDelete])

private let accountCreate = Command(
    name: "create", summary: "Create an anonymous shopper account with this device in it.",
    discussion: clientDiscussion,
    options: [Account.name] + ClientOptions.all,
    run: clientCommand { context in
        let device = try context.home.createAccount(context.api, deviceName: context.arguments.value(Account.name))
        printDevice(device, context: context, event: "account_created")
    }
)

private let accountShow = Command(
    name: "show", summary: "Show this device's account and cache (works offline).",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        let device = try context.home.requireDevice()
        let cache = try context.openCache()
        let server = (context.api.server, context.serverSource)
        if context.output.isJSON {
            return context.output.line(try ClientJSONLines.account(device, server: server, cache: cache))
        }
        try warnIfCatalogPartial(cache, context.output)
        context.output.line(try ClientText.account(device, server: server, saved: context.config.server, cache: cache))
    }
)

private let accountLink = Command(
    name: "link",
    summary: "Without CODE: print a code for another device. With CODE: join the account that made it.",
    discussion: """
        On the device that has the account, `loyalty account link` prints a single-use code such as
        K7M2-Q9XP-4HTD (valid 10 minutes). On the new device, `loyalty account link CODE` joins that
        account: offers seen on either device are then not shown again on the other. Type the code in
        either case, with or without its dashes (`loyalty account link k7m2 q9xp 4htd` works too).

        \(clientDiscussion)
        """,
    options: [Account.linkName, Account.replace] + ClientOptions.all, positionals: [Account.code],
    run: clientCommand { context in
        let typed = context.arguments.words(Account.code)
        guard !typed.isEmpty else {
            let link = try context.api.createLinkCode(try context.deviceCredential().1)
            return context.output.emit(text: ClientText.linkCode(link), json: ClientJSONLines.linkCode(link))
        }
        let device = try context.home.linkDevice(
            context.api, code: typed.joined(separator: " "), deviceName: context.arguments.value(Account.linkName),
            replacing: context.arguments.flag(Account.replace))
        printDevice(device, context: context, event: "device_linked")
    }
)

private func printDevice(_ device: DeviceCredentials, context: ClientContext, event: String) {
    context.output.emit(
        text: ClientText.joined(device, savedIn: context.home.deviceFile.path),
        json: ClientJSONLines.joined(device, event: event))
}

let devicesCommand = Command(
    name: "devices", summary: "List the devices of this account; `devices revoke ID` signs one out.",
    discussion: clientDiscussion, options: ClientOptions.all, subcommands: [devicesRevoke],
    run: clientCommand { context in
        let credential = try context.deviceCredential().1
        let devices = try context.api.devices(credential).devices
        context.output.emit(text: ClientText.devices(devices), jsonLines: devices.map(ClientJSONLines.device))
    }
)

private let devicesRevoke = Command(
    name: "revoke", summary: "Sign a device of this account out: its token stops working.",
    discussion: """
        Revoking the device you are on asks first on a terminal; elsewhere it needs --yes.

        \(clientDiscussion)
        """,
    options: [Account.yes] + ClientOptions.all, positionals: [Account.device],
    run: clientCommand { context in
        let (device, credential) = try context.deviceCredential()
        let id = context.arguments.word(Account.device)!
        if id == device.deviceID, !context.arguments.flag(Account.yes) { try confirmRevokingThisDevice(context) }
        try context.api.revokeDevice(id, credential)
        context.output.emit(text: ClientText.deviceRevoked(id), json: ClientJSONLines.deviceRevoked(id))
    }
)

/// Signing out the device you are on cannot be undone from it: a terminal is asked, anything else needs --yes.
private func confirmRevokingThisDevice(_ context: ClientContext) throws {
    let consequence = "its token stops working and only `loyalty account link --replace CODE` brings it back"
    guard isatty(STDIN_FILENO) == 1 else {
        throw context.arguments.usageError("that is this device (\(consequence)): add --yes to revoke it")
    }
    context.output.error("revoke this device? \(consequence) [y/N] ", newline: false)
    guard readLine()?.lowercased().hasPrefix("y") == true else {
        context.output.error("not revoked")
        throw SilentExit(code: ExitCode.failure)
    }
}
