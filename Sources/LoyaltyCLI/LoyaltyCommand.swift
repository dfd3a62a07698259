import Arguments
import LoyaltyAPI
import LoyaltyClient

/// The `loyalty` command tree: the root only configures; `cli/main.swift` runs it.
public enum LoyaltyCommand {
    public static let root = Command(
        name: "loyalty",
        summary: "Proximity loyalty offers from iBeacons, for Linux shoppers and retailers.",
        discussion: ExitCode.helpText,
        // Accepted before the command too (`loyalty --json sync`), by the commands that take them.
        globalOptions: ClientOptions.all,
        subcommands: [
            scanCommand, decodeCommand, doctorCommand, beaconCommand, accountCommand, devicesCommand, syncCommand,
            offersCommand, historyCommand, redeemCommand, retailerCommand, tillCommand, configCommand,
        ],
        version: Release.version
    )
}
