import Arguments
import Beacons
import DBus
import Foundation
import Geofencing
import LoyaltyAPI
import LoyaltyClient
import QRCode

/// `--notify` and `--notify-on`: the scan's desktop notifications.
enum NotifyOptions {
    static let notify = Flag(
        "notify", help: "Post each offer (and, with --notify-on, region entries and exits) as a desktop notification.")
    static let notifyOn = Option<NotificationEvents>(
        "notify-on", value: "EVENTS", help: "With --notify: any of offers,enter,exit, comma-separated (default offers).",
        expected: "offers, enter or exit, comma-separated"
    ) { NotificationEvents(parsing: $0) }

    static let all: [any DeclaredOption] = [notify, notifyOn]
}

/// Which scan events post a notification: offers as they show, and Core Location's notifyOnEntry and
/// notifyOnExit (once per entry into, or exit from, a retailer's region or a store).
struct NotificationEvents: OptionSet, Sendable {
    let rawValue: Int
    static let offers = NotificationEvents(rawValue: 1)
    static let enter = NotificationEvents(rawValue: 2)
    static let exit = NotificationEvents(rawValue: 4)

    init(rawValue: Int) { self.rawValue = rawValue }

    /// `offers,enter,exit`, any of them in any order.
    init?(parsing text: String) {
        let named: [String: NotificationEvents] = ["offers": .offers, "enter": .enter, "exit": .exit]
        var events: NotificationEvents = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let event = named[String(word)] else { return nil }
            events.insert(event)
        }
        self = events
    }
}

/// What the scan asks a notification server to show (org.freedesktop.Notifications.Notify's arguments).
struct DesktopNotification {
    enum Urgency: UInt8 { case low = 0, normal = 1, critical = 2 }

    var summary: String
    var body: String
    var category: String
    var urgency: Urgency
    /// Action keys and their labels, in the order the server shows them.
    var actions: [(key: String, label: String)] = []
    var imagePath: String? = nil
    /// Milliseconds; -1 the server's default, 0 never.
    var expireTimeout: Int32 = -1

    /// An offer as it shows: the retailer and title as the summary (which servers never read as markup),
    /// the description as the body; Redeem and Dismiss when the server shows actions.
    static func offer(_ offer: ResolvedOffer, capabilities: Set<String>) -> DesktopNotification {
        var notification = DesktopNotification(
            summary: "\(offer.retailer.name): \(offer.offer.title)",
            body: offer.offer.description ?? "", category: "x-loyalty.offer", urgency: .normal)
        if capabilities.contains("actions") {
            notification.actions = [("default", "Show"), ("redeem", "Redeem"), ("dismiss", "Dismiss")]
        }
        return notification.safe(capabilities)
    }

    /// The code for the till, replacing the offer's notification; it stays until the shopper closes it.
    static func redeemed(_ redemption: Redemption, of offer: ResolvedOffer, image: URL?, capabilities: Set<String>)
        -> DesktopNotification
    {
        DesktopNotification(
            summary: "\(offer.retailer.name): \(offer.offer.title)",
            body: "Show code \(redemption.code) at the till", category: "x-loyalty.offer", urgency: .normal,
            imagePath: image?.absoluteString, expireTimeout: 0
        ).safe(capabilities)
    }

    /// A redemption that did not go through: why, with Redeem again when the server shows actions.
    static func notRedeemed(_ offer: ResolvedOffer, why: String, retry: Bool, capabilities: Set<String>)
        -> DesktopNotification
    {
        var notification = DesktopNotification(
            summary: "\(offer.retailer.name): \(offer.offer.title)", body: why, category: "x-loyalty.offer",
            urgency: .normal)
        if retry, capabilities.contains("actions") { notification.actions = [("redeem", "Redeem"), ("dismiss", "Dismiss")] }
        return notification.safe(capabilities)
    }

    /// Entering or leaving a place: a retailer's beacon region, or a store.
    static func place(entered: Bool, name: String, detail: String, capabilities: Set<String>) -> DesktopNotification {
        DesktopNotification(
            summary: "\(entered ? "Entered" : "Left") \(name)", body: detail, category: "x-loyalty.region",
            urgency: .low
        ).safe(capabilities)
    }

    /// Network text made harmless: control characters shown as their codes (as on a terminal) and, where
    /// the server reads the body as markup, its five special characters as entities.
    private func safe(_ capabilities: Set<String>) -> DesktopNotification {
        var safe = self
        safe.summary = TerminalText.escaped(summary)
        safe.body = TerminalText.escaped(body)
        if capabilities.contains("body-markup") { safe.body = Self.markupEscaped(safe.body) }
        return safe
    }

    static func markupEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

/// What the shopper did with a notification, for the scan to carry out.
enum NotificationAnswer {
    case redeem(ResolvedOffer, notification: UInt32)
    case dismiss(ResolvedOffer)
}

/// What the scan needs to carry out the shopper's answers: its offers, how it redeems, and where the codes'
/// QR images go (beside the cache).
struct NotificationAnswering {
    let offers: OfferSession
    let redemption: ScanRedemption
    let codeImages: URL
}

/// The scan's notifications on the session bus. Never in the scan's way: without a bus or a notification
/// server, or when either refuses or goes away, the scan goes on and `warn` is told once why notifications
/// are off (and once when a returning server turns them on again). Answers (ActionInvoked, NotificationClosed)
/// are read without waiting, when the scan asks at each snapshot or when `descriptor` is readable while it waits
/// for keys: the bus is only ever touched on the scan's own thread.
final class DesktopNotifier {
    static let service = "org.freedesktop.Notifications"
    static let objectPath = "/org/freedesktop/Notifications"

    let events: NotificationEvents
    private let warn: (String) -> Void
    private var bus: MessageBus?
    /// What the server said it can show; nil until it answers (and again after it left).
    private var capabilities: Set<String>?
    /// Whether a server answered during this scan: its leaving is said as such.
    private var hadServer = false
    /// Why notifications are off, once said; nil while they work.
    private var offBecause: String?
    /// Notifications that offer actions, by the id the server gave them.
    private var answerable: [UInt32: ResolvedOffer] = [:]
    /// The last notification of each place, replaced by the next (an exit replaces its entry).
    private var placeNotifications: [String: UInt32] = [:]

    private let answering: NotificationAnswering

    init(events: NotificationEvents, answering: NotificationAnswering, warn: @escaping (String) -> Void) {
        self.events = events
        self.answering = answering
        self.warn = warn
        do {
            let bus = try MessageBus.session()
            try bus.addMatch("type='signal',interface='\(Self.service)'")
            self.bus = bus
        } catch {
            turnOff("cannot reach the session bus: \(error.message)")
            return
        }
        _ = serverAnswers()
    }

    func offerShown(_ presentation: OfferPresentation) {
        guard events.contains(.offers), serverAnswers() else { return }
        let notification = DesktopNotification.offer(presentation.offer, capabilities: capabilities ?? [])
        guard let id = post(notification) else { return }
        if !notification.actions.isEmpty { answerable[id] = presentation.offer }
    }

    func regionEvent(_ event: RegionEvent, retailers: () -> [CatalogRetailer]) {
        let entered: Bool
        switch event.kind {
        case .enter: entered = true
        case .exit: entered = false
        case .state: return
        }
        guard events.contains(entered ? .enter : .exit) else { return }
        let region = event.region
        let retailer = retailers().first { $0.uuid == region.uuid }?.name ?? region.uuid.uuidString
        let part = [region.major.map { "department \($0)" }, region.minor.map { "beacon \($0)" }].compactMap { $0 }
        let name = ([retailer] + part).joined(separator: ", ")
        let detail = entered ? "Its offers show as you come near their beacons." : ""
        post(place: region.description, entered: entered, name: name, detail: detail)
    }

    func storeEvent(_ event: GeoRegionEvent, store: ResolvedStore) {
        let entered = event.kind == .enter
        guard events.contains(entered ? .enter : .exit) else { return }
        post(place: event.identifier, entered: entered, name: store.store.name, detail: store.retailer.name)
    }

    private func post(place: String, entered: Bool, name: String, detail: String) {
        guard serverAnswers() else { return }
        let notification = DesktopNotification.place(
            entered: entered, name: name, detail: detail, capabilities: capabilities ?? [])
        placeNotifications[place] = post(notification, replacing: placeNotifications[place] ?? 0)
    }

    /// The bus's socket, readable when an answer may have come; -1 without a bus.
    var descriptor: Int32 { bus?.descriptor ?? -1 }

    /// Carries out what the shopper did with the notifications since the last call: Redeem redeems through
    /// the API and replaces the notification with the code for the till and its QR symbol (or why not); Dismiss
    /// dismisses the offer, and the next waiting one shows (`show`). `said` gets each redemption's outcome,
    /// `dismissed` each dismissal of the offer on screen. Whether there were answers.
    @discardableResult
    func carryOutAnswers(
        show: (OfferPresentation) -> () -> Void, said: (ScanRedemption.Outcome, ResolvedOffer) -> Void,
        dismissed: () -> Void
    ) throws(ClientError) -> Bool {
        let offers = answering.offers
        let answers = answers()
        for answer in answers {
            switch answer {
            case .dismiss(let offer):
                if offers.current?.offer.offer.id == offer.offer.id {
                    try offers.dismiss(show: show)
                    dismissed()
                }
            case .redeem(let offer, let notification):
                let outcome = try answering.redemption.redeem(
                    offer, of: offers, retry: "choose Redeem again", show: show)
                said(outcome, offer)
                guard serverAnswers() else { continue }
                let replacement =
                    if let redemption = outcome.redemption {
                        DesktopNotification.redeemed(
                            redemption, of: offer, image: codeImage(redemption.code, offer: offer),
                            capabilities: capabilities ?? [])
                    } else {
                        DesktopNotification.notRedeemed(
                            offer, why: outcome.line, retry: outcome.canRetry, capabilities: capabilities ?? [])
                    }
                let id = post(replacement, replacing: notification)
                if let id, !replacement.actions.isEmpty { answerable[id] = offer }
            }
        }
        return !answers.isEmpty
    }

    /// The shopper answered `offer` at the terminal (it left the screen): its notification, if it still asks for
    /// an answer, goes too.
    func answeredElsewhere(_ offer: ResolvedOffer) {
        for (id, asking) in answerable where asking.offer.id == offer.offer.id {
            answerable[id] = nil
            close(id)
        }
    }

    /// The code's QR symbol as a PNG beside the cache (0600: it redeems the offer), or nil when it cannot be written.
    private func codeImage(_ code: String, offer: ResolvedOffer) -> URL? {
        guard let symbol = try? QRCode(code) else { return nil }
        let file = answering.codeImages.appendingPathComponent("\(offer.offer.id.uuidString.lowercased()).png")
        do {
            try FileManager.default.createDirectory(
                at: answering.codeImages, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard FileManager.default.createFile(
                atPath: file.path, contents: Data(symbol.png()), attributes: [.posixPermissions: 0o600])
            else { return nil }
            return file
        } catch {
            return nil
        }
    }

    /// What the shopper did since the last call, read without waiting: Redeem, Dismiss, or closing an offer's
    /// notification (which dismisses it too; the server's expiry does not).
    private func answers() -> [NotificationAnswer] {
        guard let bus else { return [] }
        var answers: [NotificationAnswer] = []
        do {
            while let signal = try bus.nextSignal(timeoutMilliseconds: 0, wakeup: -1) {
                guard signal.interface == Self.service, let raw = signal.arguments.first?.integer,
                    let id = UInt32(exactly: raw), let offer = answerable[id]
                else { continue }
                switch (signal.member, signal.arguments.dropFirst().first) {
                case ("ActionInvoked", .string("redeem")?):
                    answerable[id] = nil
                    answers.append(.redeem(offer, notification: id))
                case ("ActionInvoked", .string("dismiss")?):
                    answerable[id] = nil
                    answers.append(.dismiss(offer))
                    close(id)
                case ("NotificationClosed", let reason?) where reason.integer == 2:  // dismissed by the user
                    answerable[id] = nil
                    answers.append(.dismiss(offer))
                case ("NotificationClosed", _):
                    answerable[id] = nil
                default:
                    continue  // "default" (a click on it) leaves the offer as it is
                }
            }
        } catch {
            self.bus = nil
            turnOff("the session bus went away")
        }
        return answers
    }

    /// Whether notifications can be posted: a server answers GetCapabilities (asked again after it left, so
    /// one that comes back, or is started, is used).
    private func serverAnswers() -> Bool {
        guard let bus else { return false }
        guard capabilities == nil else { return true }
        do {
            let reply = try bus.call(
                destination: Self.service, path: Self.objectPath, interface: Self.service, method: "GetCapabilities",
                timeoutMilliseconds: 2000)
            guard case .array(let names)? = reply.first else { return false }
            capabilities = Set(names.compactMap(\.string))
            hadServer = true
            if offBecause != nil {
                offBecause = nil
                warn("notifications are on again")
            }
            return true
        } catch {
            fail(error)
            return false
        }
    }

    @discardableResult
    private func post(_ notification: DesktopNotification, replacing: UInt32 = 0) -> UInt32? {
        guard let bus else { return nil }
        var hints: [(String, DBusPropertyValue)] = [
            ("desktop-entry", .string("loyalty")), ("category", .string(notification.category)),
            ("urgency", .byte(notification.urgency.rawValue)),
        ]
        if let image = notification.imagePath { hints.append(("image-path", .string(image))) }
        do {
            let reply = try bus.call(
                destination: Self.service, path: Self.objectPath, interface: Self.service, method: "Notify",
                arguments: [
                    .string("loyalty"), .uint32(replacing), .string(""), .string(notification.summary),
                    .string(notification.body), .strings(notification.actions.flatMap { [$0.key, $0.label] }),
                    .properties(hints), .int32(notification.expireTimeout),
                ], timeoutMilliseconds: 2000)
            return reply.first?.integer.flatMap { UInt32(exactly: $0) }
        } catch {
            fail(error)
            return nil
        }
    }

    private func close(_ id: UInt32) {
        _ = try? bus?.call(
            destination: Self.service, path: Self.objectPath, interface: Self.service, method: "CloseNotification",
            arguments: [.uint32(id)], timeoutMilliseconds: 2000)
    }

    /// A call that failed: the server is gone (tried again at the next notification), the bus refuses us or
    /// went away (off for the rest of the scan).
    private func fail(_ error: DBusFailure) {
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            turnOff(
                hadServer
                    ? "the notification server left the session bus; they come back on when one returns"
                    : "no notification server runs on the session bus (a desktop, or dunst, provides one)")
            capabilities = nil
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            turnOff("the notification server does not answer")
            capabilities = nil
        case "org.freedesktop.DBus.Error.AccessDenied":
            bus = nil
            turnOff("the session bus refuses us: \(error.message)")
        case "org.freedesktop.DBus.Error.Disconnected", "org.freedesktop.DBus.Error.NoServer":
            bus = nil
            turnOff("the session bus went away")
        default:
            bus = nil
            turnOff("the notification server failed: \(error.description)")
        }
    }

    private func turnOff(_ reason: String) {
        guard offBecause == nil else { return }
        offBecause = reason
        warn("notifications are off: \(TerminalText.escaped(reason)); the scan goes on")
    }
}
