import Digest
import Foundation
import LoyaltyAPI
import Synchronization

/// What `SecureBeaconTable` holds: every secure beacon, and the identities of each one's current window and the windows
/// either side in compact arrays, found through an open-addressing hash index. A turn recomputes only the identities of
/// the beacons whose window turned (one AES pair each), so beacons on clocks of their own cost nothing between their
/// turns; 100,000 beacons take about 22 MiB (`bytes`).
struct SecureBeaconIndex {
    let beacons: [SecureBeacon]
    /// Each beacon's current window: its counter shifted right by its exponent.
    private var currentWindows: [Int64]
    /// Three per beacon, window w's in slot `3 * beacon + w mod 3`: the EID's 8 bytes, or for the iBeacon form the
    /// retailer's number (`retailerNumbers`) above the EID's first 4 bytes (major and minor).
    private var identities: [UInt64]
    /// An identity's slot + 1, or 0 when empty; linear probing from the identity's home bucket.
    private var buckets: [UInt32]
    private let bucketBits: Int
    /// The UUIDs beacons of the iBeacon form broadcast under, numbered.
    private let retailerNumbers: [UUID: UInt64]
    /// When the first beacon's current window ends: `turn` is due from then.
    private(set) var turnsAt = Date.distantFuture
    /// The moment the windows are those of.
    private(set) var turnedAt: Date

    init(beacons: [SecureBeacon], at now: Date) throws {
        self.beacons = beacons
        currentWindows = Array(repeating: Self.unset, count: beacons.count)
        identities = Array(repeating: 0, count: 3 * beacons.count)
        // At most half full: probes stay short.
        var bits = 4
        while 1 << bits < 6 * beacons.count { bits += 1 }
        bucketBits = bits
        buckets = Array(repeating: 0, count: 1 << bits)
        var numbers: [UUID: UInt64] = [:]
        for beacon in beacons where beacon.form == .ibeacon && numbers[beacon.uuid] == nil {
            numbers[beacon.uuid] = UInt64(numbers.count)
        }
        retailerNumbers = numbers
        turnedAt = now
        try turn(at: now)
    }

    /// Moves every beacon to its windows at `now` (later or earlier than the last turn): the identities of windows
    /// that left the three are removed, those of windows that entered are computed, on every core.
    mutating func turn(at now: Date) throws {
        var turnsAt = Date.distantFuture.timeIntervalSinceReferenceDate
        var entering: [(slot: Int, window: Int64)] = []
        for index in beacons.indices {
            let beacon = beacons[index]
            let current = Self.counter(of: beacon, at: now) >> beacon.exponent
            let old = currentWindows[index]
            if current != old {
                let kept = (current - 1)...(current + 1)
                if old != Self.unset {
                    for window in (old - 1)...(old + 1) where !kept.contains(window) && Self.isValid(window, beacon) {
                        remove(slot: Self.slot(index, window))
                    }
                }
                currentWindows[index] = current
                for window in kept where (old == Self.unset || abs(window - old) > 1) && Self.isValid(window, beacon) {
                    entering.append((Self.slot(index, window), window))
                }
            }
            turnsAt = min(turnsAt, Self.start(of: current + 1, beacon).timeIntervalSinceReferenceDate)
        }
        let computed = try identities(of: entering)
        for (entry, identity) in zip(entering, computed) {
            identities[entry.slot] = identity
            insert(slot: entry.slot)
        }
        self.turnsAt = Date(timeIntervalSinceReferenceDate: turnsAt)
        turnedAt = now
    }

    /// The identities of the windows entering, computed in chunks on every core; a beacon's windows come together, so
    /// they share its temporary key when their counters' top 16 bits are the same.
    private func identities(of entering: [(slot: Int, window: Int64)]) throws -> [UInt64] {
        let chunks = max(1, min(entering.count / 3_000, 4 * ProcessInfo.processInfo.activeProcessorCount))
        let results = Mutex([Result<[UInt64], any Error>](repeating: .success([]), count: chunks))
        let beacons = beacons
        let retailerNumbers = retailerNumbers
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = (entering.count * chunk / chunks)..<(entering.count * (chunk + 1) / chunks)
            let result = Result {
                var temporary: (beacon: Int, top: UInt32, key: [UInt8])?
                return try range.map { position in
                    let (slot, window) = entering[position]
                    let beacon = beacons[slot / 3]
                    let counter = UInt32(window << beacon.exponent)
                    if temporary?.beacon != slot / 3 || temporary?.top != counter >> 16 {
                        temporary = (
                            slot / 3, counter >> 16,
                            try EddystoneEID.temporaryKey(identityKey: beacon.identityKey, counter: counter)
                        )
                    }
                    let eid = try EddystoneEID.ephemeralID(
                        temporaryKey: temporary!.key, exponent: beacon.exponent, counter: counter)
                    switch beacon.form {
                    case .eddystone:
                        return eid.reduce(0) { $0 << 8 | UInt64($1) }
                    case .ibeacon:
                        return retailerNumbers[beacon.uuid, default: 0] << 32
                            | eid.prefix(4).reduce(0) { $0 << 8 | UInt64($1) }
                    }
                }
            }
            results.withLock { $0[chunk] = result }
        }
        return try results.withLock { results in try results.flatMap { try $0.get() } }
    }

    /// The beacon and window whose identity `sighting` heard, among the three windows of each beacon.
    func lookup(_ sighting: Sighting) -> (beacon: Int, window: Int64)? {
        let identity: UInt64
        let form: SecureBeaconForm
        if let eid = sighting.eid {
            guard let value = Self.eidValue(eid) else { return nil }
            (identity, form) = (value, .eddystone)
        } else if let uuid = sighting.uuid, let major = sighting.major, let minor = sighting.minor,
            let number = retailerNumbers[uuid]
        {
            (identity, form) = (number << 32 | UInt64(major) << 16 | UInt64(minor), .ibeacon)
        } else {
            return nil
        }
        let mask = buckets.count - 1
        var bucket = home(identity)
        while buckets[bucket] != 0 {
            let slot = Int(buckets[bucket] - 1)
            let index = slot / 3
            if identities[slot] == identity, beacons[index].form == form {
                let current = currentWindows[index]
                // The one of current - 1 ... current + 1 whose slot this is.
                let window = current - 1 + ((Int64(slot % 3) - (current - 1)) % 3 + 3) % 3
                return (index, window)
            }
            bucket = (bucket + 1) & mask
        }
        return nil
    }

    /// Beacon `index`'s window number `window`.
    func window(beacon index: Int, _ window: Int64) -> SecureBeaconTable.Window {
        let beacon = beacons[index]
        let start = Self.start(of: window, beacon)
        return SecureBeaconTable.Window(
            beacon: beacon, counter: window << beacon.exponent, start: start,
            end: start.addingTimeInterval(Double(Int64(1) << beacon.exponent)))
    }

    /// What the index holds in memory, by its own accounting: its arrays' capacities, and each beacon's heap parts
    /// (its identity key's array, its retailer's name when longer than a String holds inline).
    var bytes: Int {
        let heap = beacons.reduce(0) { total, beacon in
            let name = beacon.retailerName.utf8.count
            return total + 32 + beacon.identityKey.count + (name > 15 ? name : 0)
        }
        return beacons.capacity * MemoryLayout<SecureBeacon>.stride + heap + currentWindows.capacity * 8
            + identities.capacity * 8 + buckets.capacity * 4 + retailerNumbers.capacity * 48
    }

    /// The number of identities held.
    var identityCount: Int { buckets.reduce(0) { $0 + ($1 == 0 ? 0 : 1) } }

    // MARK: Windows

    private static let unset = Int64.min

    /// The beacon's time counter at `now`: it counts whole seconds from its origin.
    private static func counter(of beacon: SecureBeacon, at now: Date) -> Int64 {
        beacon.counterOrigin + Int64(now.timeIntervalSince(beacon.counterAt).rounded(.down))
    }

    private static func start(of window: Int64, _ beacon: SecureBeacon) -> Date {
        beacon.counterAt.addingTimeInterval(Double((window << beacon.exponent) - beacon.counterOrigin))
    }

    /// A window the 32-bit counter has.
    private static func isValid(_ window: Int64, _ beacon: SecureBeacon) -> Bool {
        window >= 0 && (window + 1) << beacon.exponent <= 1 << 32
    }

    private static func slot(_ index: Int, _ window: Int64) -> Int {
        3 * index + Int((window % 3 + 3) % 3)
    }

    /// 16 hex digits as their 8 bytes, big-endian, without an array.
    private static func eidValue(_ text: String) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        for byte in text.utf8 {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
            digits += 1
        }
        return digits == 16 ? value : nil
    }

    // MARK: Hash index

    /// Fibonacci hashing: iBeacon identities differ only in a few bits, EIDs anywhere.
    private func home(_ identity: UInt64) -> Int {
        Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bucketBits))
    }

    private mutating func insert(slot: Int) {
        let mask = buckets.count - 1
        var bucket = home(identities[slot])
        while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = UInt32(slot + 1)
    }

    /// Removes the slot's bucket and shifts back the entries after it that probing would no longer reach.
    private mutating func remove(slot: Int) {
        let mask = buckets.count - 1
        var hole = home(identities[slot])
        while buckets[hole] != UInt32(slot + 1) {
            guard buckets[hole] != 0 else { return }
            hole = (hole + 1) & mask
        }
        var next = hole
        while true {
            next = (next + 1) & mask
            guard buckets[next] != 0 else { break }
            let wanted = home(identities[Int(buckets[next] - 1)])
            // The entry stays when its home is cyclically in (hole, next].
            let stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if stays { continue }
            buckets[hole] = buckets[next]
            hole = next
        }
        buckets[hole] = 0
    }
}
