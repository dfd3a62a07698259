import Digest
import Foundation
import LoyaltyAPI
import Synchronization

/// Every secure beacon's EIDs of its current window and the windows either side (a beacon's clock may drift by one),
/// by their bytes: resolving a sighting is one dictionary lookup. Built from the database when the first window of
/// any beacon turns (or a beacon was provisioned here); a beacon provisioned by another instance is resolved after
/// this one's next turn.
final class SecureBeaconTable: Sendable {
    /// A beacon's EID of one window.
    struct Window: Sendable {
        let beacon: SecureBeacon
        /// The beacon's counter at the window's start.
        let counter: Int64
        let start: Date
        let end: Date
    }

    /// The iBeacon form's key: the retailer's UUID, and major and minor as the EID's first 4 bytes.
    private struct IBeaconIdentity: Hashable {
        let uuid: UUID
        let majorMinor: UInt32
    }

    private struct Table {
        var eddystone: [UInt64: Window] = [:]
        var iBeacon: [IBeaconIdentity: Window] = [:]
        /// When the first beacon's window turns: the table is stale from then.
        var turnsAt = Date.distantFuture
        var builtAt: Date
    }

    private let database: Database
    private let keyring: BeaconKeyring
    private let table = Mutex<Table?>(nil)

    init(database: Database, keyring: BeaconKeyring) {
        self.database = database
        self.keyring = keyring
    }

    /// The window of the beacon `sighting` heard at `now`: its identifier is one of the beacon's windows either side
    /// of now, and it was heard within one of that beacon's windows of now and of the window itself. Nil otherwise,
    /// whatever the reason.
    func resolve(_ sighting: Sighting, at now: Date) throws -> Window? {
        let found: Window? = try table.withLock { table in
            let current: Table
            if let built = table, built.builtAt <= now, now < built.turnsAt {
                current = built
            } else {
                current = try build(at: now)
                table = current
            }
            if let eid = sighting.eid.flatMap(Hex.bytes) {
                return current.eddystone[eid.reduce(0) { $0 << 8 | UInt64($1) }]
            }
            guard let uuid = sighting.uuid, let major = sighting.major, let minor = sighting.minor else { return nil }
            return current.iBeacon[IBeaconIdentity(uuid: uuid, majorMinor: UInt32(major) << 16 | UInt32(minor))]
        }
        guard let found else { return nil }
        let length = found.end.timeIntervalSince(found.start)
        // A capture replayed later, or a time made up to match an identifier: the heard time must be near now, and
        // the identifier's window near the heard time.
        guard abs(sighting.heardAt.timeIntervalSince(now)) <= length,
            sighting.heardAt >= found.start.addingTimeInterval(-length),
            sighting.heardAt < found.end.addingTimeInterval(length)
        else { return nil }
        return found
    }

    /// The next resolution builds the table anew: a beacon was provisioned.
    func invalidate() {
        table.withLock { $0 = nil }
    }

    private func build(at now: Date) throws -> Table {
        var table = Table(builtAt: now)
        for beacon in try database.secureBeacons(keyring: keyring) {
            let length = Int64(1) << beacon.exponent
            let counter = beacon.counterOrigin + Int64(now.timeIntervalSince(beacon.counterAt).rounded(.down))
            let current = counter >> beacon.exponent
            for window in (current - 1)...(current + 1) where window >= 0 && (window + 1) * length <= 1 << 32 {
                let windowCounter = window * length
                let start = beacon.counterAt.addingTimeInterval(Double(windowCounter - beacon.counterOrigin))
                let entry = Window(
                    beacon: beacon, counter: windowCounter, start: start, end: start.addingTimeInterval(Double(length)))
                let eid = try EddystoneEID.ephemeralID(
                    identityKey: beacon.identityKey, exponent: beacon.exponent, counter: UInt32(windowCounter))
                switch beacon.form {
                case .eddystone:
                    table.eddystone[eid.reduce(0) { $0 << 8 | UInt64($1) }] = entry
                case .ibeacon:
                    let majorMinor = eid.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
                    table.iBeacon[IBeaconIdentity(uuid: beacon.uuid, majorMinor: majorMinor)] = entry
                }
                if window == current { table.turnsAt = min(table.turnsAt, entry.end) }
            }
        }
        return table
    }
}
