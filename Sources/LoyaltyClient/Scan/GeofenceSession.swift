import Foundation
import Geofencing
import LoyaltyAPI

/// Stores' geofences fed by fixes: enter and exit go to the output, and the catalog around the shopper
/// is synced as they move.
public struct GeofenceSession {
    public var monitor: GeoRegionMonitor
    public let offers: OfferSession
    public let radiusKilometres: Double
    public let output: ScanOutput
    private var storesByID: [String: ResolvedStore] = [:]
    private var loadedRevision = -1
    private var syncWarned = false

    public init(monitor: GeoRegionMonitor, offers: OfferSession, radiusKilometres: Double, output: ScanOutput) {
        self.monitor = monitor
        self.offers = offers
        self.radiusKilometres = radiusKilometres
        self.output = output
    }

    public mutating func observe(_ fix: GeoFix) throws {
        syncIfLeftArea(fix.coordinate)
        offers.syncIfDue(warned: &syncWarned, output: output)
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
            if !syncWarned { output.syncFailed(error, syncing: .area) }
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
                    center: GeoCoordinate(latitude: resolved.store.latitude, longitude: resolved.store.longitude),
                    radius: Double(resolved.store.radiusMetres)))
        }
    }

    /// Exits that fell due by `time`, not yet reported: a scan with beacons interleaves them with its own.
    public mutating func exitsDue(by time: Double) -> [GeoRegionEvent] { monitor.advance(to: time) }

    /// Sends the event to the output with its store (events of stores no longer cached are dropped).
    public func report(_ event: GeoRegionEvent) {
        guard let resolved = storesByID[event.identifier] else { return }
        output.report(event, store: resolved)
    }
}
