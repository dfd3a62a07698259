import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `loyalty retailer beacon secure`.
let retailerBeaconCommand = Command(
    name: "beacon", summary: "Make a beacon secure: an identity that rotates and only the service resolves.",
    subcommands: [beaconSecure])

private let exponent = Option<UInt8>(
    "exponent", value: "K",
    help: "The identifier changes every 2^K seconds (default \(SecureBeaconRequest.defaultExponent): 1,024 s).",
    expected: "a whole number from 0 to 15"
) { UInt8($0).flatMap { $0 <= 15 ? $0 : nil } }
private let form = Option<SecureBeaconForm>(
    "form", value: "eddystone|ibeacon",
    help: "Broadcast Eddystone-EID frames (default), or an iBeacon under your UUID with the EID's first 4 bytes as "
        + "major and minor.",
    expected: "eddystone or ibeacon", parse: SecureBeaconForm.init(rawValue:))
private let outputFile = Option<String>(
    "output", value: "FILE",
    help: "Write the provisioning document here (mode 0600) instead of to standard output.")

private let beaconSecure = Command(
    name: "secure", summary: "A new identity key for beacon MAJOR MINOR, in its provisioning document.",
    discussion: """
        The service makes the key and shows it only this once: write it to the beacon (docs/SECURE-BEACONS.md).
        Running the command again replaces the key, and the beacon must be provisioned anew.

        \(clientDiscussion)
        """,
    options: [exponent, form, outputFile] + ClientOptions.all,
    positionals: [BeaconNumbers.major, BeaconNumbers.minor],
    run: clientCommand { context in
        let (major, minor) = BeaconNumbers.read(context)
        let request = SecureBeaconRequest(
            exponent: context.arguments.value(exponent), form: context.arguments.value(form))
        let provisioning = try context.api.secureBeacon(
            major: major, minor: minor, request, try context.retailerCredential())
        let path = context.arguments.value(outputFile)
        if let path { try provisioning.write(to: URL(fileURLWithPath: path)) }
        context.output.emit(
            text: ClientText.beaconSecured(provisioning, savedIn: path),
            json: ClientJSONLines.beaconSecured(provisioning, savedIn: path))
    })
