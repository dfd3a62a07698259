import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `loyalty retailer beacon list`, `secure` and `eid-params`.
let retailerBeaconCommand = Command(
    name: "beacon",
    summary: "The fleet: each beacon, when shoppers last heard it, its battery; make a beacon secure.",
    subcommands: [beaconList, beaconSecure, beaconEIDParameters])

private let fleetDays = Option<Int>(
    "days", value: "N", help: "Count each beacon's sightings over the last N days (1 to 366, default 14).",
    expected: "a whole number of days, 1 to 366"
) { Int($0).flatMap { Validation.figureDays.contains($0) ? $0 : nil } }
private let quietDays = Option<Int>(
    "quiet-days", value: "Q", help: "Flag a beacon unheard for Q days (1 to 366, default 7).",
    expected: "a whole number of days, 1 to 366"
) { Int($0).flatMap { Validation.figureDays.contains($0) ? $0 : nil } }

private let beaconList = Command(
    name: "list",
    summary: "Every beacon: its offer, when last heard, its battery and temperature, and what to check.",
    discussion: """
        A secure beacon is heard only by verified sightings (a seen offer alone does not count), and shows the
        Eddystone-TLM its last sightings carried: battery (LOW under \(BeaconTelemetry.lowBatteryMillivolts) mV),
        temperature and uptime.

        \(clientDiscussion)
        """,
    options: [fleetDays, quietDays] + ClientOptions.all,
    run: clientCommand { context in
        let fleet = try context.api.fleet(
            days: context.arguments.value(fleetDays) ?? 14, quietDays: context.arguments.value(quietDays) ?? 7,
            try context.retailerCredential())
        context.output.emit(
            text: ClientText.fleet(fleet), jsonLines: fleet.beacons.map(ClientJSONLines.fleetBeacon))
    })

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

@Sendable private func hexKey(_ text: String) -> String? { text.utf8.count == 64 && Hex.bytes(text) != nil ? text : nil }
private let beaconPublicKey = Option<String>(
    "beacon-public-key", value: "HEX",
    help: "The beacon's X25519 public key: make it secure by the spec's key exchange (the key never travels).",
    expected: "64 hex digits", parse: hexKey)
private let servicePublicKey = Option<String>(
    "service-public-key", value: "HEX",
    help: "The service public key written to the beacon (default: the one `loyalty retailer beacon eid-params` shows).",
    expected: "64 hex digits", parse: hexKey)
private let firstEID = Option<String>(
    "first-eid", value: "HEX", help: "With --beacon-public-key: the EID the beacon broadcast when its clock read --counter.",
    expected: "16 hex digits"
) { $0.utf8.count == 16 && Hex.bytes($0) != nil ? $0 : nil }
private let counter = Option<UInt32>(
    "counter", value: "N", help: "With --beacon-public-key: the beacon's time counter (seconds) when it broadcast --first-eid.",
    expected: "a whole number from 0 to 4294967295", parse: { UInt32($0) })

private let beaconSecure = Command(
    name: "secure", summary: "Make beacon MAJOR MINOR secure: a new identity key, or the beacon's own by key exchange.",
    discussion: """
        Without --beacon-public-key the service makes the key and shows it only this once, in the beacon's
        provisioning document: write it to the beacon (docs/SECURE-BEACONS.md).

        With --beacon-public-key, --first-eid and --counter (the Eddystone-EID spec's key exchange), the beacon made
        its identity key from the service public key (`loyalty retailer beacon eid-params`) and its own key pair; the
        service derives the same key, and accepts the beacon only if its first EID matches. No key is shown.

        Running the command again replaces the key, and the beacon must be provisioned anew.

        \(clientDiscussion)
        """,
    options: [exponent, form, outputFile, beaconPublicKey, firstEID, counter, servicePublicKey] + ClientOptions.all,
    positionals: [BeaconNumbers.major, BeaconNumbers.minor],
    run: clientCommand { context in
        let (major, minor) = BeaconNumbers.read(context)
        let arguments = context.arguments
        let exchange: [any DeclaredOption] = [beaconPublicKey, firstEID, counter]
        if exchange.contains(where: arguments.isGiven) {
            guard let beaconKey = arguments.value(beaconPublicKey), let eid = arguments.value(firstEID),
                let counter = arguments.value(counter)
            else { throw arguments.usageError("--beacon-public-key, --first-eid and --counter go together") }
            if arguments.isGiven(outputFile) {
                throw arguments.usageError("--output writes a shared key's document: the key exchange shows no key")
            }
            let credential = try context.retailerCredential()
            let serviceKey = try arguments.value(servicePublicKey) ?? context.api.eidParameters(credential).servicePublicKey
            let registration = try context.api.registerBeacon(
                major: major, minor: minor,
                EIDRegistrationRequest(
                    beaconPublicKey: beaconKey, servicePublicKey: serviceKey, firstEID: eid, counter: counter,
                    exponent: arguments.value(exponent), form: arguments.value(form)),
                credential)
            return context.output.emit(
                text: ClientText.beaconRegistered(registration), json: ClientJSONLines.beaconRegistered(registration))
        }
        if arguments.isGiven(servicePublicKey) {
            throw arguments.usageError("--service-public-key goes with --beacon-public-key")
        }
        let credential = try context.retailerCredential()
        let request = SecureBeaconRequest(exponent: arguments.value(exponent), form: arguments.value(form))
        let provisioning = try context.api.secureBeacon(major: major, minor: minor, request, credential)
        let path = arguments.value(outputFile)
        if let path { try provisioning.write(to: URL(fileURLWithPath: path)) }
        context.output.emit(
            text: ClientText.beaconSecured(provisioning, savedIn: path),
            json: ClientJSONLines.beaconSecured(provisioning, savedIn: path))
    })

private let beaconEIDParameters = Command(
    name: "eid-params",
    summary: "The service public key to write to a beacon that makes its own identity key (EID key exchange).",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        let parameters = try context.api.eidParameters(try context.retailerCredential())
        context.output.emit(
            text: "service public key  \(TerminalText.escaped(parameters.servicePublicKey))\n"
                + "exponents           \(parameters.minExponent) to \(parameters.maxExponent)",
            json: ClientJSONLines.object([
                ("event", .string("eid_params")), ("service_public_key", .string(parameters.servicePublicKey)),
                ("min_exponent", .int(Int(parameters.minExponent))), ("max_exponent", .int(Int(parameters.maxExponent))),
            ]))
    })
