import Beacons
import Dispatch
import Foundation
import LoyaltyAPI
import Synchronization
import Testing

@testable import LoyaltyClient

/// Scans running at once on one device show each offer once, and a shown offer is
/// recorded at the real moment in server time, not at the replayed capture's time.
@Suite struct ConcurrentScanTests {
    /// Hands a session to the one thread that uses it.
    private final class SessionBox: @unchecked Sendable {
        let session: OfferSession
        init(_ session: OfferSession) { self.session = session }
    }

    private static let now = Date(timeIntervalSince1970: 1_800_000_000)
    private static let matey = CatalogRetailer(
        id: UUID(), name: "Matey's", uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!)

    /// A cache file holding Matey's sushi (once only) and pizza (again after 60 s); the server runs 30 s ahead.
    private static func seededCache() throws -> (file: URL, sushi: Offer, pizza: Offer) {
        let file = try temporaryDirectory().appendingPathComponent("cache.sqlite")
        let sushi = Offer(
            id: UUID(), retailerID: matey.id, major: 1, minor: 1, title: "sushi", updatedAt: now)
        let pizza = Offer(
            id: UUID(), retailerID: matey.id, major: 1, minor: 2, title: "pizza", reshowAfterSeconds: 60,
            updatedAt: now)
        try OfferCache(file: file).apply(
            CatalogPage(
                cursor: "c1", full: true, serverTime: now, retailers: [matey], offers: [sushi, pizza], removed: []),
            etag: nil, serverTimeOffset: 30)
        return (file, sushi, pizza)
    }

    private static func near(_ minor: UInt16) -> BeaconProximity {
        BeaconProximity(identity: BeaconIdentity(uuid: matey.uuid, major: 1, minor: minor), proximity: .near)
    }

    /// A replay ten minutes into its capture, played in an instant: the server is told now (device clock
    /// plus the server's offset), not ten minutes ahead.
    @Test func aReplayRecordsTheRealMomentInServerTime() throws {
        let (file, sushi, _) = try Self.seededCache()
        let cache = try OfferCache(file: file)
        let session = try OfferSession(cache: cache, holding: .dwell(5), sync: nil, deviceClock: { Self.now })
        #expect(try session.update(time: 0, beacons: []) == nil)
        let shown = try session.update(time: 600, beacons: [Self.near(1)])
        #expect(shown?.offer.offer.id == sushi.id)
        #expect(shown?.serverTime == Self.now.addingTimeInterval(630), "the presenter's own timeline")
        #expect(try cache.outbox(limit: 10).items == [SeenItem(offerID: sushi.id, seenAt: Self.now.addingTimeInterval(30))])
        // The session's own reshow clock stays on its timeline.
        #expect(try cache.seen()[sushi.id] == Self.now.addingTimeInterval(630))
    }

    /// A scan killed between its claim and the offer's line left the claim behind (sushi, recorded as seen): the
    /// next session shows it without a second seen item. A claim of a process that still runs holds (pizza: its
    /// line is on the way), and a settled claim is an offer shown.
    @Test func anOfferClaimedByAScanThatDiedBeforeShowingItShowsInTheNextSession() throws {
        let (file, sushi, pizza) = try Self.seededCache()
        let cache = try OfferCache(file: file)
        // No process of this boot has that start time.
        let gone = ProcessIdentity(text: ProcessIdentity.current.text.split(separator: " ")[0] + " \(getpid()) 0")
        let parent = ProcessIdentity(of: getppid())
        #expect(!gone.isRunning && parent.isRunning && ProcessIdentity.current.isRunning)
        #expect(try cache.claimShown(sushi.id, shownAt: Self.now, reportedAt: Self.now, reshowAfter: nil, claimant: gone))
        #expect(try cache.claimShown(pizza.id, shownAt: Self.now, reportedAt: Self.now, reshowAfter: 60, claimant: parent))
        #expect(try cache.unshown() == [sushi.id])

        let session = try OfferSession(cache: cache, holding: .dwell(5), sync: nil, deviceClock: { Self.now })
        #expect(try session.update(time: 0, beacons: [Self.near(1)])?.offer.offer.id == sushi.id)
        #expect(try session.update(time: 10, beacons: [Self.near(2)]) == nil, "pizza's claim holds")
        #expect(try cache.unshown().isEmpty)
        #expect(try cache.outbox(limit: 10).items.map(\.offerID) == [sushi.id, pizza.id])
        let next = try OfferSession(cache: cache, holding: .dwell(5), sync: nil, deviceClock: { Self.now })
        #expect(try next.update(time: 0, beacons: [Self.near(1)]) == nil, "shown once")
    }

    /// Three sessions on three connections to one cache, fed the same walk on three threads at once,
    /// five times over: sushi is shown once in all, pizza once per 60 s of walk, and the outbox holds
    /// exactly what was shown.
    @Test(arguments: 1...5) func threeScansAtOnceShowEachOfferOnce(round: Int) throws {
        let (file, sushi, pizza) = try Self.seededCache()
        let shown = Mutex<[UUID]>([])
        let failures = Mutex<[String]>([])
        // All three start (and read the seen set) before any shows an offer, as three processes would.
        let sessions = try (0..<3).map { _ in
            SessionBox(
                try OfferSession(
                    cache: try OfferCache(file: file), holding: .dwell(1), sync: nil, deviceClock: { Self.now }))
        }
        DispatchQueue.concurrentPerform(iterations: 3) { index in
            let session = sessions[index].session
            do {
                for second in 0..<90 {
                    let beacons = second < 45 ? [Self.near(1)] : [Self.near(2)]
                    if let presentation = try session.update(time: Double(second), beacons: beacons) {
                        shown.withLock { $0.append(presentation.offer.offer.id) }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let ids = shown.withLock { $0 }
        #expect(ids.filter { $0 == sushi.id }.count == 1, "round \(round): \(ids)")
        #expect(ids.filter { $0 == pizza.id }.count == 1, "round \(round): \(ids)")
        let outbox = try OfferCache(file: file).outbox(limit: 100).items
        #expect(outbox.map(\.offerID).sorted { $0.uuidString < $1.uuidString } == ids.sorted { $0.uuidString < $1.uuidString })
    }

    /// On a terminal an offer that came near while another was on screen waits: it is claimed (and goes
    /// to the outbox) only when the dismissal shows it, and one another scan showed meanwhile is passed over.
    @Test func aWaitingOfferIsClaimedOnlyWhenItShows() throws {
        let (file, sushi, pizza) = try Self.seededCache()
        let cache = try OfferCache(file: file)
        let terminal = try OfferSession(cache: cache, holding: .untilDismissed, sync: nil, deviceClock: { Self.now })
        #expect(try terminal.update(time: 0, beacons: [Self.near(1)])?.offer.offer.id == sushi.id)
        #expect(try terminal.update(time: 1, beacons: [Self.near(1), Self.near(2)]) == nil)
        #expect(terminal.waitingCount == 1)
        #expect(try cache.outbox(limit: 10).items.map(\.offerID) == [sushi.id])
        let shown = try terminal.dismiss()
        #expect(shown?.offer.offer.id == pizza.id)
        #expect(shown?.time == 1, "at the last snapshot's time")
        #expect(terminal.current?.offer.offer.id == pizza.id)
        #expect(Set(try cache.outbox(limit: 10).items.map(\.offerID)) == [sushi.id, pizza.id])

        let (otherFile, _, otherPizza) = try Self.seededCache()
        let waiting = try OfferSession(
            cache: try OfferCache(file: otherFile), holding: .untilDismissed, sync: nil, deviceClock: { Self.now })
        let other = try OfferSession(
            cache: try OfferCache(file: otherFile), holding: .dwell(5), sync: nil, deviceClock: { Self.now })
        _ = try waiting.update(time: 0, beacons: [Self.near(1)])
        _ = try waiting.update(time: 1, beacons: [Self.near(1), Self.near(2)])
        #expect(try other.update(time: 0, beacons: [Self.near(2)])?.offer.offer.id == otherPizza.id)
        #expect(try waiting.dismiss() == nil)
        #expect(waiting.current == nil && waiting.waitingCount == 0)
        let outbox = try OfferCache(file: otherFile).outbox(limit: 10).items
        #expect(outbox.filter { $0.offerID == otherPizza.id }.count == 1)
    }
}
