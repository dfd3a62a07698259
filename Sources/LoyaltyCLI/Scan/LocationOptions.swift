import Arguments
import Foundation
import Geofencing
import LoyaltyAPI
import LoyaltyClient

/// The options `loyalty scan` adds for geographic regions.
enum LocationOptions {
    static let location = Option<LocationSource>(
        "location", value: "SOURCE",
        help: "Monitor stores' geofences from gpsd[:HOST:PORT] (default localhost:2947), nmea:FILE or fixed:LAT,LON.",
        expected: "gpsd, gpsd:HOST:PORT, nmea:FILE or fixed:LAT,LON", parse: LocationSource.init(parsing:))
    static let exitMargin = Option<Double>(
        "exit-margin", value: "METRES",
        help: "With --location: distance beyond a store's radius before leaving counts (default 50).",
        expected: "a number of metres, 0 or more", parse: nonNegative)
    static let exitDelay = Option<Double>(
        "exit-delay", value: "SECONDS",
        help: "With --location: time beyond radius + margin before a store is exited (default 20).",
        expected: "a number of seconds, 0 or more", parse: nonNegative)
    static let radius = Option<Double>(
        "radius-km", value: "KM",
        help: "With --location: the area around the shopper to sync stores and offers for (default 10).",
        expected: "a number of kilometres, \(CatalogArea.radiusKilometres.lowerBound) to \(CatalogArea.radiusKilometres.upperBound)"
    ) { Double($0).flatMap { CatalogArea.radiusKilometres.contains($0) ? $0 : nil } }

    static let all: [any DeclaredOption] = [location, exitMargin, exitDelay, radius]

    private static let nonNegative: @Sendable (String) -> Double? = {
        Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
    }
}

/// The `--location` source, or nil without the option.
func locationSource(_ arguments: ParsedArguments) throws -> LocationSource? {
    guard let source = arguments.value(LocationOptions.location) else { return nil }
    if case .gpsd = source, arguments.isGiven(ScanOptions.replay) {
        throw arguments.usageError(
            "--replay runs on the capture's clock: combine it with --location nmea:FILE or fixed:LAT,LON, not gpsd")
    }
    return source
}

/// Stores' geofences as the options describe them, sharing the scan's offers and output.
func geofenceSession(_ arguments: ParsedArguments, offers: OfferSession, output: ScanOutput) throws -> GeofenceSession {
    let radius = arguments.value(LocationOptions.radius) ?? CatalogArea.defaultRadiusKilometres
    // The parsed values are finite and non-negative, which is all the monitor asks of them.
    let monitor = try GeoRegionMonitor(
        configuration: .init(
            maximumRadius: Double(Validation.storeRadiusMetres.upperBound),
            exitMargin: arguments.value(LocationOptions.exitMargin) ?? 50,
            exitDelay: arguments.value(LocationOptions.exitDelay) ?? 20))
    return GeofenceSession(monitor: monitor, offers: offers, radiusKilometres: radius, output: output)
}

/// `loyalty scan --location` without a radio: stores' geofences alone, on the positions' clock.
func runGeofenceScan(_ arguments: ParsedArguments, _ source: LocationSource, radioProblem: String) throws {
    let output = CommandScope.output(json: arguments.flag(ClientOptions.json))
    output.error("beacons are off (\(radioProblem)); monitoring stores' geofences")
    let offers = try openOfferSession(arguments, interactive: false).offers
    try warnIfCatalogPartial(offers.cache, output)
    let printer = ScanPrinter(arguments, output: output, offers: offers, redemption: nil, interruption: nil)
    var session = try geofenceSession(arguments, offers: offers, output: printer)
    printer.positionsEnded(try followPositions(source, now: Date().timeIntervalSince1970) { try session.observe($0) })
}
