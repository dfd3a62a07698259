import Arguments
import BeaconRadio
import Foundation
import Geofencing
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// The options `loyalty scan` adds for geographic regions.
enum LocationOptions {
    static let location = Option<String>(
        "location", value: "SOURCE",
        help: "Monitor stores' geofences from gpsd[:HOST:PORT] (default localhost:2947), nmea:FILE or fixed:LAT,LON.")
    static let exitMargin = Option<Double>(
        "exit-margin", value: "METRES",
        help: "With --location: distance beyond a store's radius before leaving counts (default 50).",
        parse: nonNegative)
    static let exitDelay = Option<Double>(
        "exit-delay", value: "SECONDS",
        help: "With --location: time beyond radius + margin before a store is exited (default 20).",
        parse: nonNegative)
    static let radius = Option<Double>(
        "radius-km", value: "KM",
        help: "With --location: the area around the shopper to sync stores and offers for (default 10)."
    ) { Double($0).flatMap { CatalogArea.radiusKilometres.contains($0) ? $0 : nil } }

    static let all: [any DeclaredOption] = [location, exitMargin, exitDelay, radius]

    private static let nonNegative: @Sendable (String) -> Double? = {
        Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
    }
}

/// Where positions come from.
enum LocationSource: Equatable {
    case gpsd(host: String, port: UInt16)
    case nmea(path: String)
    case fixed(GeoCoordinate)

    init?(parsing text: String) {
        if text == "gpsd" {
            self = .gpsd(host: "localhost", port: 2947)
        } else if text.hasPrefix("gpsd:") {
            let rest = text.dropFirst(5)
            guard let colon = rest.lastIndex(of: ":"),
                let port = UInt16(rest[rest.index(after: colon)...]),
                port > 0, colon > rest.startIndex
            else { return nil }
            self = .gpsd(host: String(rest[..<colon]), port: port)
        } else if text.hasPrefix("nmea:"), text.count > 5 {
            self = .nmea(path: String(text.dropFirst(5)))
        } else if text.hasPrefix("fixed:"), let point = GeoCoordinate(parsing: text.dropFirst(6)) {
            self = .fixed(point)
        } else {
            return nil
        }
    }
}

/// The `--location` source, or nil without the option.
func locationSource(_ arguments: ParsedArguments) throws -> LocationSource? {
    guard let text = try arguments.value(LocationOptions.location) else { return nil }
    guard let source = LocationSource(parsing: text) else {
        throw arguments.usageError("--location must be gpsd, gpsd:HOST:PORT, nmea:FILE or fixed:LAT,LON (got '\(text)')")
    }
    if case .gpsd = source, arguments.isGiven(ScanOptions.replay) {
        throw arguments.usageError(
            "--replay runs on the capture's clock: combine it with --location nmea:FILE or fixed:LAT,LON, not gpsd")
    }
    return source
}

/// Stores' geofences as the options describe them, sharing the scan's offers.
func geofenceSession(
    _ arguments: ParsedArguments, offers: OfferSession, json: Bool, table: LiveTable? = nil
) throws -> GeofenceSession {
    let radius = try arguments.value(LocationOptions.radius) ?? CatalogArea.defaultRadiusKilometres
    // The parsed values are finite and non-negative, which is all the monitor asks of them.
    let monitor = try GeoRegionMonitor(
        configuration: .init(
            maximumRadius: Double(Validation.storeRadiusMetres.upperBound),
            exitMargin: try arguments.value(LocationOptions.exitMargin) ?? 50,
            exitDelay: try arguments.value(LocationOptions.exitDelay) ?? 20))
    return GeofenceSession(monitor: monitor, offers: offers, radiusKilometres: radius, json: json, table: table)
}

/// `loyalty scan --location` without a radio: stores' geofences alone, on the positions' clock.
func runGeofenceScan(_ arguments: ParsedArguments, _ source: LocationSource, radioProblem: String) throws {
    printError("beacons are off (\(radioProblem)); monitoring stores' geofences")
    let json = arguments.flag(ScanOptions.json) || !standardOutputIsTerminal
    let offers = try openOfferSession(arguments, interactive: false)
    try warnIfCatalogPartial(offers, json: json)
    var session = try geofenceSession(arguments, offers: offers, json: json)
    let statistics = try followPositions(source, now: Date().timeIntervalSince1970) { try session.observe($0) }
    if let statistics { session.summary(statistics) }
}

/// Hands every position of a live or logged source to `observe` as it comes; a `fixed` position is
/// one fix at `now`. Returns the log's statistics for `nmea`.
func followPositions(
    _ source: LocationSource, now: Double, _ observe: (GeoFix) throws -> Void
) throws -> NMEAStream.Statistics? {
    switch source {
    case .fixed(let point):
        try observe(GeoFix(time: now, coordinate: point))
    case .nmea(let file):
        var fixes = try NMEAFixes(path: file)
        while let fix = fixes.next() { try observe(fix) }
        return fixes.statistics
    case .gpsd(let host, let port):
        let connection: GPSDConnection
        do { connection = try GPSDConnection(host: host, port: port) } catch {
            throw CommandFailure(error.description, exitCode: ExitCode.unavailable)
        }
        var gpsd = GPSDSession()
        while let line = connection.nextLine() {
            if let fix = gpsd.read(line) { try observe(fix) }
            if gpsd.receiversGone {
                printError("gpsd has no active GPS receiver any more; the scan ends")
                break
            }
        }
    }
    return nil
}

/// The fixes of a NMEA 0183 log, one at a time, on the log's own clock.
struct NMEAFixes {
    private let lines: [Substring]
    private var index = 0
    private var stream = NMEAStream()

    init(path: String) throws {
        let log: String
        do { log = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw CommandFailure(
                "cannot read \(path): \(error.localizedDescription)", exitCode: ExitCode.ioError)
        }
        lines = log.split(whereSeparator: \.isNewline)
    }

    var statistics: NMEAStream.Statistics { stream.statistics }

    mutating func next() -> GeoFix? {
        while index < lines.count {
            index += 1
            if let fix = stream.feed(lines[index - 1]) { return fix }
        }
        return nil
    }
}

/// Stores' geofences fed by fixes, printing enter and exit as they happen.
struct GeofenceSession {
    var monitor: GeoRegionMonitor
    let offers: OfferSession
    let radiusKilometres: Double
    let json: Bool
    /// The beacons' live table, when the scan draws one: the lines go above it.
    let table: LiveTable?
    private var storesByID: [String: ResolvedStore] = [:]
    private var loadedRevision = -1
    private var syncWarned = false

    init(
        monitor: GeoRegionMonitor, offers: OfferSession, radiusKilometres: Double, json: Bool, table: LiveTable?
    ) {
        self.monitor = monitor
        self.offers = offers
        self.radiusKilometres = radiusKilometres
        self.json = json
        self.table = table
    }

    mutating func observe(_ fix: GeoFix) throws {
        syncIfLeftArea(fix.coordinate)
        syncOffersIfDue(offers, warned: &syncWarned, table: table)
        if loadedRevision != offers.catalogRevision { loadStores() }
        for event in monitor.observe(fix) { report(event) }
    }

    /// Syncs the area around the shopper when there is none yet or they are more than half its
    /// radius from its centre, so every store within half the radius of them is always in the cache.
    private mutating func syncIfLeftArea(_ point: GeoCoordinate) {
        if let area = offers.syncArea,
            GreatCircle.distance(point, GeoCoordinate(latitude: area.latitude, longitude: area.longitude))
                <= area.radiusKilometres * 500
        {
            return
        }
        do {
            _ = try offers.sync(
                area: CatalogArea(
                    latitude: point.latitude, longitude: point.longitude, radiusKilometres: radiusKilometres))
            syncWarned = false
        } catch {
            if !syncWarned {
                printWarning("warning: \(error.description); stores come from the cache", above: table)
            }
            syncWarned = true
        }
    }

    /// Makes the monitored regions the cached stores: new and moved ones added, removed ones dropped.
    private mutating func loadStores() {
        loadedRevision = offers.catalogRevision
        let stores = offers.stores
        let current = Set(stores.map { $0.store.id.uuidString })
        for identifier in storesByID.keys where !current.contains(identifier) {
            monitor.remove(identifier)
        }
        storesByID = [:]
        for resolved in stores {
            let identifier = resolved.store.id.uuidString
            storesByID[identifier] = resolved
            // The server validated the centre and radius; the monitor clamps the radius anyway.
            try? monitor.add(
                GeoRegion(
                    identifier: identifier,
                    center: GeoCoordinate(
                        latitude: resolved.store.latitude, longitude: resolved.store.longitude),
                    radius: Double(resolved.store.radiusMetres)))
        }
    }

    /// Exits that fell due by `time`, not yet reported: a scan with beacons interleaves them with its own.
    mutating func exitsDue(by time: Double) -> [GeoRegionEvent] { monitor.advance(to: time) }

    func report(_ event: GeoRegionEvent) {
        guard let resolved = storesByID[event.identifier] else { return }
        if json {
            printJSONLine([
                ("event", .string(event.kind.rawValue)), ("t", .double(event.time)),
                (
                    "region",
                    .object([
                        ("store", .string(resolved.store.storeID)), ("name", .string(resolved.store.name)),
                        ("retailer", .string(resolved.retailer.name)),
                    ])
                ),
            ])
        } else {
            let verb = event.kind == .enter ? "entered" : "left"
            let line = eventLine(at: event.time, "\(verb) \(resolved.store.name) (\(resolved.retailer.name))")
            if let table { table.printAbove(line) } else { printOut(line) }
        }
    }

    func summary(_ statistics: NMEAStream.Statistics) {
        if json {
            printJSONLine([
                ("event", .string("summary")), ("nmea_lines", .int(statistics.lines)),
                ("fixes", .int(statistics.fixes)),
                ("malformed_skipped", .int(statistics.malformed)),
            ])
        } else {
            printError(
                "replayed \(statistics.lines) NMEA lines: \(statistics.fixes) fixes, \(statistics.malformed) malformed lines skipped"
            )
        }
    }
}

/// A connection to gpsd over TCP that asks for JSON reports and hands them over line by line.
final class GPSDConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var finished = false

    init(host: String, port: UInt16) throws(Failure) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw Failure(description: "cannot resolve gpsd host \(host)")
        }
        defer { freeaddrinfo(first) }
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        var lastError: Int32 = 0
        while let address = candidate {
            let socketDescriptor = socket(
                address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            if socketDescriptor >= 0 {
                if connect(socketDescriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                    connected = socketDescriptor
                    break
                }
                lastError = errno
                close(socketDescriptor)
            }
            candidate = address.pointee.ai_next
        }
        guard connected >= 0 else {
            throw Failure(
                description:
                    "cannot connect to gpsd at \(host):\(port): \(String(cString: strerror(lastError))) (is gpsd running? `systemctl start gpsd`, or gpsfake for a log)"
            )
        }
        descriptor = connected
        let command = Array(GPSDReport.watchCommand.utf8)
        guard
            command.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
                == command.count
        else {
            close(descriptor)
            throw Failure(description: "gpsd at \(host):\(port) closed the connection")
        }
    }

    deinit { close(descriptor) }

    /// The next line gpsd sent, or nil once it closed the connection.
    func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if finished { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                finished = true
                if buffer.isEmpty { return nil }
                buffer.append(UInt8(ascii: "\n"))
            }
        }
    }
}
