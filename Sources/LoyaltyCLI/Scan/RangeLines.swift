import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// A scan's `range` lines, newline included:
/// `{"event":"range","t":..,"beacons":[{"uuid":..,"major":..,"minor":..,"rssi":..,"distance_m":..,"proximity":..}]}`
/// with `t` to the millisecond, `rssi` to 0.1 dB and `distance_m` to the centimetre (null when unknown).
///
/// The same beacons fill line after line, so each one's text up to its RSSI (`{"uuid":..,"major":..,"minor":..,
/// "rssi":`, half of its object) is made once and kept, in a slot chosen by its major and minor: a beacon
/// whose slot another took has its text made again. The slots are few and fixed, so the memory is too.
public struct RangeLines {
    private static let slotBits = 10
    private static let slotCount = 1 << slotBits
    /// Room for the longest opening (82 bytes).
    private static let slotSize = 96
    /// `slotCount` slots of `slotSize` bytes.
    private var openings = [UInt8](repeating: 0, count: RangeLines.slotCount * RangeLines.slotSize)
    /// The beacon whose opening each slot holds, and its length (0: none yet, whatever the identity says).
    private var holders = [(identity: BeaconIdentity, count: Int)](
        repeating: (BeaconIdentity(uuid: UUID(), major: 0, minor: 0), 0), count: RangeLines.slotCount)

    public init() {}

    /// `snapshot`'s line, written at the end of `buffer`.
    public mutating func write(_ snapshot: RangingSnapshot, to buffer: inout JSONLineBuffer) {
        // Every field at its longest: 56 bytes around the beacons, 162 for each.
        buffer.write(maxCount: 64 + 168 * snapshot.beacons.count) { line in
            line.raw("{\"event\":\"range\",\"t\":")
            line.fixed(snapshot.time, decimals: 3)
            line.raw(",\"beacons\":[")
            for (index, beacon) in snapshot.beacons.enumerated() {
                if index > 0 { line.byte(UInt8(ascii: ",")) }
                write(beacon, to: &line)
            }
            line.raw("]}\n")
        }
    }

    private mutating func write(_ beacon: RangedBeacon, to line: inout ByteCursor) {
        let opening = self.opening(of: beacon.identity)
        // The whole slot, of which the opening is the first bytes: the line's room (168 bytes a beacon) has it.
        openings.withUnsafeBufferPointer {
            line.copy($0.baseAddress! + opening.lowerBound, count: opening.count, blockSize: Self.slotSize)
        }
        if let rssi = beacon.rssi { line.fixed(rssi, decimals: 1) } else { line.raw("null") }
        line.raw(",\"distance_m\":")
        if let distance = beacon.distance { line.fixed(distance, decimals: 2) } else { line.raw("null") }
        switch beacon.proximity {
        case .immediate: line.raw(",\"proximity\":\"immediate\"}")
        case .near: line.raw(",\"proximity\":\"near\"}")
        case .far: line.raw(",\"proximity\":\"far\"}")
        case .unknown: line.raw(",\"proximity\":\"unknown\"}")
        }
    }

    /// Where `openings` holds `{"uuid":..,"major":..,"minor":..,"rssi":` for `identity`.
    @inline(always)
    private mutating func opening(of identity: BeaconIdentity) -> Range<Int> {
        // Fibonacci hashing of major and minor, so that neighbouring minors land apart; the slot beside it is
        // the second place to look, so that two beacons of one slot do not take it from each other line
        // after line.
        let key = UInt32(identity.major) << 16 | UInt32(identity.minor)
        let first = Int(truncatingIfNeeded: (key &* 0x9E37_79B1) >> (32 - Self.slotBits))
        let slot =
            holds(first, identity)
            ? first : holds(first ^ 1, identity) ? first ^ 1 : makeOpening(of: identity, near: first)
        let start = slot * Self.slotSize
        return start..<(start + holders[slot].count)
    }

    @inline(always)
    private func holds(_ slot: Int, _ identity: BeaconIdentity) -> Bool {
        let holder = holders[slot]
        // Field by field, the cheapest first.
        return holder.identity.minor == identity.minor && holder.identity.major == identity.major
            && holder.identity.uuid == identity.uuid && holder.count > 0
    }

    /// The text `opening(of:)` found in neither of the beacon's slots (rarely, once the beacons are known),
    /// out of its way: in the first slot, or the second if only that one is free. Returns the slot.
    @inline(never)
    private mutating func makeOpening(of identity: BeaconIdentity, near first: Int) -> Int {
        let slot = holders[first].count > 0 && holders[first ^ 1].count == 0 ? first ^ 1 : first
        let count = openings.withUnsafeMutableBufferPointer { openings in
            var text = ByteCursor(openings.baseAddress! + slot * Self.slotSize)
            text.raw("{\"uuid\":")
            text.uuid(identity.uuid)
            text.raw(",\"major\":")
            text.digits(UInt(identity.major), width: 1)
            text.raw(",\"minor\":")
            text.digits(UInt(identity.minor), width: 1)
            text.raw(",\"rssi\":")
            return text.count
        }
        holders[slot] = (identity, count)
        return slot
    }
}
