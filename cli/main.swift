import Arguments
import LoyaltyAPI

#if canImport(Glibc)
    import Glibc
#endif

let loyalty = Command(
    name: "loyalty",
    summary: "Proximity loyalty offers from iBeacons, for Linux shoppers and retailers.",
    discussion: ExitCode.helpText,
    // Accepted before the command too (`loyalty --json sync`), by the commands that take them.
    globalOptions: ClientOptions.all,
    subcommands: [
        scanCommand, decodeCommand, doctorCommand, beaconCommand, accountCommand, devicesCommand, syncCommand,
        offersCommand, historyCommand, redeemCommand, retailerCommand, tillCommand,
    ],
    version: Release.version
)

exit(loyalty.main(Array(CommandLine.arguments.dropFirst())))
