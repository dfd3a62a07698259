import Foundation
import LoyaltyAPI
import Synchronization

/// Resolves what devices heard of secure beacons: every secure beacon's identities of its current window and the
/// windows either side (a beacon's clock may drift by one), found in O(1) (`SecureBeaconIndex`). Loaded from the
/// database at the first resolution, after a beacon was provisioned here (`invalidate`), and at a window's turn when
/// the last load is `reloadInterval` old: a beacon provisioned by another instance resolves here from then. Between
/// loads a turn recomputes only the identities of the beacons whose window turned.
///
/// The identity keys are held opened in memory, in the loaded beacons, for as long as the server runs: a turn
/// computes EIDs from them. They never leave the process (no log, no answer holds them) and at rest stay sealed.
public final class SecureBeaconTable: Sendable {
    /// A beacon's EID of one window.
    struct Window: Sendable {
        let beacon: SecureBeacon
        /// The beacon's counter at the window's start.
        let counter: Int64
        let start: Date
        let end: Date
    }

    /// What the table holds: `bytes` by its own accounting (`SecureBeaconIndex.bytes`).
    public struct Occupancy: Sendable {
        public let beacons: Int
        public let identities: Int
        public let bytes: Int
    }

    /// How old a load may be at a window's turn before the turn loads the table anew.
    static let reloadInterval: TimeInterval = 60

    private struct Loaded {
        var index: SecureBeaconIndex
        let loadedAt: Date
    }

    private let database: Database
    private let keyring: BeaconKeyring
    private let table = Mutex<Loaded?>(nil)

    public init(database: Database, keyring: BeaconKeyring) {
        self.database = database
        self.keyring = keyring
    }

    /// The window of the beacon `sighting` heard at `now`: its identifier is one of the beacon's windows either side
    /// of now, and it was heard within one of that beacon's windows of now and of the window itself. Nil otherwise,
    /// whatever the reason.
    func resolve(_ sighting: Sighting, at now: Date) throws -> Window? {
        try resolve([sighting], at: now)[0]
    }

    /// `resolve` of each sighting, under one lock.
    func resolve(_ sightings: [Sighting], at now: Date) throws -> [Window?] {
        try table.withLock { table in
            let index = try current(&table, at: now)
            return sightings.map { sighting in
                guard let (beacon, number) = index.lookup(sighting) else { return nil }
                let found = index.window(beacon: beacon, number)
                let length = found.end.timeIntervalSince(found.start)
                // A capture replayed later, or a time made up to match an identifier: the heard time must be near
                // now, and the identifier's window near the heard time.
                guard abs(sighting.heardAt.timeIntervalSince(now)) <= length,
                    sighting.heardAt >= found.start.addingTimeInterval(-length),
                    sighting.heardAt < found.end.addingTimeInterval(length)
                else { return nil }
                return found
            }
        }
    }

    /// Brings the table to `now`, as a resolution at `now` would (a load, or a turn of the windows that turned), and
    /// says what it holds: the bench times this.
    public func refresh(at now: Date) throws -> Occupancy {
        try table.withLock { table in
            let index = try current(&table, at: now)
            return Occupancy(beacons: index.beacons.count, identities: index.identityCount, bytes: index.bytes)
        }
    }

    /// The next resolution loads the table anew: a beacon was provisioned.
    func invalidate() {
        table.withLock { $0 = nil }
    }

    /// The index with its windows at `now`, loaded or turned when due.
    private func current(_ table: inout Loaded?, at now: Date) throws -> SecureBeaconIndex {
        if var loaded = table, now >= loaded.loadedAt,
            now < loaded.index.turnsAt || now.timeIntervalSince(loaded.loadedAt) < Self.reloadInterval
        {
            if now >= loaded.index.turnsAt || now < loaded.index.turnedAt {
                // Released first: the index's arrays are then changed in place, not copied.
                table = nil
                try loaded.index.turn(at: now)
                table = loaded
            }
            return loaded.index
        }
        table = nil
        let loaded = Loaded(
            index: try SecureBeaconIndex(beacons: try database.secureBeacons(keyring: keyring), at: now), loadedAt: now)
        table = loaded
        return loaded.index
    }
}
