import LoyaltyAPI

#if canImport(Glibc)
    import Glibc
#endif

let loyalty = CommandSpec(
    name: "loyalty",
    summary: "Proximity loyalty offers from iBeacons, for Linux shoppers and retailers.",
    discussion: ExitCode.helpText,
    subcommands: [
        scanCommand, decodeCommand, doctorCommand, beaconCommand, accountCommand, devicesCommand, syncCommand,
        offersCommand, historyCommand, redeemCommand, retailerCommand,
    ],
    version: Release.version
)

exit(loyalty.main(Array(CommandLine.arguments.dropFirst())))
