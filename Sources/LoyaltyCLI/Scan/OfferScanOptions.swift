import Arguments
import Beacons
import Foundation
import LoyaltyClient

/// The options `loyalty scan` adds for offers (it has its own --json).
enum OfferScanOptions {
    static let minimumProximity = Option<Proximity>(
        "min-proximity", value: "PROXIMITY",
        help: "Show an offer when its beacon is this near or nearer: immediate, near (default), far.",
        expected: "immediate, near or far"
    ) { Proximity(rawValue: $0).flatMap { $0 == .unknown ? nil : $0 } }
    static let dwell = Option<Double>(
        "dwell", value: "SECONDS",
        help: "With --json: seconds of capture time an offer stays shown before the next (default 5).",
        expected: "a number of seconds, 0 or more"
    ) { Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } }
    static let offline = Flag(
        "offline", help: "Do not contact the server; seen offers wait in the outbox for the next sync.")

    static let all: [any DeclaredOption] = [
        minimumProximity, dwell, offline,
    ] + ClientOptions.network
}

/// The offers side of a scan, from the scan's arguments: the cache of this device, syncing at start
/// and every minute unless --offline or the device has no account, and redeeming with `r`. With
/// `interactive`, an offer stays until dismissed; otherwise for --dwell seconds. A sync or a redemption
/// under way is abandoned once `interruption` asks. With an account, secure beacons are resolved through the
/// service (queued for the next sync when --offline); a replay waits for each batch's answer.
func openOfferSession(
    _ arguments: ParsedArguments, interactive: Bool, interruption: Interruption? = nil, replaying: Bool = false
) throws -> (
    offers: OfferSession, redemption: ScanRedemption, home: ClientHome, hasAccount: Bool,
    secure: SecureBeaconResolver?
) {
    let context = try ClientContext(arguments)
    if let interruption { context.api.isCancelled = { interruption.isRequested } }
    let minimum = arguments.value(OfferScanOptions.minimumProximity) ?? .near
    let dwell = arguments.value(OfferScanOptions.dwell) ?? 5
    let cache = try context.openCache()
    let hasAccount = try context.home.loadDevice() != nil
    let online = !arguments.flag(OfferScanOptions.offline) && hasAccount
    let offers = try OfferSession(
        cache: cache, minimumProximity: minimum, holding: interactive ? .untilDismissed : .dwell(dwell),
        sync: online ? try context.syncEngine(cache) : nil, deviceClock: Date.init)
    let redeemer = Result { () throws(ClientError) in
        Redeemer(cache: cache, api: context.api, credential: try context.deviceCredential().1, now: Date.init)
    }
    let secure = try hasAccount
        ? SecureBeaconResolver(
            offers: offers,
            sender: online ? SightingSender(like: context.api, credential: try context.deviceCredential().1) : nil,
            waitsForAnswers: replaying)
        : nil
    return (offers, ScanRedemption(redeemer), context.home, hasAccount, secure)
}
