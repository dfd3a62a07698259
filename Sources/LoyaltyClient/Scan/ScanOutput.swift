import Beacons
import Geofencing

/// Where a scan's sessions say what happens: `loyalty scan` prints it as JSON lines or on a terminal.
/// The sessions call it on the thread that feeds them, in the order things happen.
public protocol ScanOutput: AnyObject {
    /// A ranging snapshot is about to reach the offers: an interactive terminal reads the shopper's keys here;
    /// JSON lines write its range line here, before an offer it shows is claimed.
    func snapshotDue(_ snapshot: RangingSnapshot) throws
    func report(_ event: RegionEvent)
    /// What shows `offer`, made before the offer is claimed and run the moment the claim commits
    /// (`OfferSession.update`). When it returns, the offer must be in front of the shopper (written out, not
    /// buffered): the claim is then settled. A kill before that shows the offer in the next scan; one after its
    /// line and before the settling, twice.
    func show(_ offer: OfferPresentation) -> () -> Void
    /// A ranging snapshot, and the offer it showed (already recorded as seen, and shown by `show`).
    func report(_ snapshot: RangingSnapshot, shown: OfferPresentation?) throws
    /// The beacons' side ended at its last snapshot; an offer may still be on screen.
    func beaconsFinished() throws
    func report(_ event: GeoRegionEvent, store: ResolvedStore)
    /// A sync failed and the scan goes on from the cache; said once until a sync succeeds again.
    func syncFailed(_ error: ClientError, syncing: ScanSync)
    /// The position source ended (a log's end, gpsd without receivers); the beacons may go on.
    func positionsEnded(_ end: PositionsEnd)
    /// A live event was handled: what it printed should reach a reader now.
    func eventHandled()
}

/// What a scan was syncing when it failed.
public enum ScanSync: Sendable {
    /// The periodic sync of the offers and the seen set.
    case offers
    /// The catalog around the shopper, after they moved.
    case area
}

extension OfferSession {
    /// `syncIfDue`, whose failure goes to `output` once (`warned` remembers it) while the scan goes on.
    public func syncIfDue(warned: inout Bool, output: ScanOutput) {
        do {
            _ = try syncIfDue()
            warned = false
        } catch {
            if !warned { output.syncFailed(error, syncing: .offers) }
            warned = true
        }
    }
}
