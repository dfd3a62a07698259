import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// A scan's `range` lines, newline included:
/// `{"event":"range","t":..,"beacons":[{"uuid":..,"major":..,"minor":..,"rssi":..,"distance_m":..,"proximity":..}]}`
/// with `t` to the millisecond, `rssi` to 0.1 dB and `distance_m` to the centimetre (null when unknown). An Eddystone
/// beacon has `"kind":"eddystone-uid","namespace":..,"instance":..` or `"kind":"eddystone-eid","eid":..` in place of
/// the UUID, major and minor, then for an EID `last_seen` (its sighting time, for its resolver) and, once its address
/// sent TLM, `telemetry` (as `loyalty decode` names its fields).
///
/// The same beacons fill line after line, so each one's text up to its RSSI (`{"uuid":..,"major":..,"minor":..,
/// "rssi":`, half of its object) is made once and kept, in a slot chosen by its major and minor: a beacon
/// whose slot another took has its text made again. The slots are few and fixed, so the memory is too.
public struct RangeLines {
    private static let slotBits = 10
    private static let slotCount = 1 << slotBits
    /// Room for the longest opening (92 bytes, an Eddystone-UID's).
    private static let slotSize = 96
    /// `slotCount` slots of `slotSize` bytes.
    private var openings = [UInt8](repeating: 0, count: RangeLines.slotCount * RangeLines.slotSize)
    /// The beacon whose opening each slot holds, and its length (0: none yet, whatever the identity says).
    private var holders = [(identity: BeaconIdentity, count: Int)](
        repeating: (BeaconIdentity(uuid: UUID(), major: 0, minor: 0), 0), count: RangeLines.slotCount)

    public init() {}

    /// `snapshot`'s line, written at the end of `buffer`.
    public mutating func write(_ snapshot: RangingSnapshot, to buffer: inout JSONLineBuffer) {
        // Every field at its longest: 56 bytes around the beacons, 162 for an iBeacon, 342 for an Eddystone beacon.
        buffer.write(maxCount: 64 + 350 * snapshot.beacons.count) { line in
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
        let opening = self.opening(of: beacon.identity, kind: beacon.kind)
        // The whole slot, of which the opening is the first bytes: the line's room (168 bytes a beacon) has it.
        openings.withUnsafeBufferPointer {
            line.copy($0.baseAddress! + opening.lowerBound, count: opening.count, blockSize: Self.slotSize)
        }
        if let rssi = beacon.rssi { line.fixed(rssi, decimals: 1) } else { line.raw("null") }
        line.raw(",\"distance_m\":")
        if let distance = beacon.distance { line.fixed(distance, decimals: 2) } else { line.raw("null") }
        switch beacon.proximity {
        case .immediate: line.raw(",\"proximity\":\"immediate\"")
        case .near: line.raw(",\"proximity\":\"near\"")
        case .far: line.raw(",\"proximity\":\"far\"")
        case .unknown: line.raw(",\"proximity\":\"unknown\"")
        }
        if beacon.kind.isEddystone { writeEddystoneFields(beacon, to: &line) }
        line.byte(UInt8(ascii: "}"))
    }

    /// An EID's `,"last_seen":..` and `,"telemetry":{..}`: at most 180 bytes.
    @inline(never)
    private func writeEddystoneFields(_ beacon: RangedBeacon, to line: inout ByteCursor) {
        if beacon.kind == .eddystoneEID {
            line.raw(",\"last_seen\":")
            line.fixed(beacon.lastSeen, decimals: 3)
        }
        switch beacon.telemetry {
        case nil: break
        case .plain(let telemetry):
            // Integers and fixed points written as digits: every line repeats them.
            line.raw(",\"telemetry\":{\"battery_mv\":")
            line.digits(UInt(telemetry.batteryMillivolts), width: 1)
            line.raw(",\"temperature_c\":")
            if telemetry.temperatureBits == TelemetryFrame.temperatureNotSupported {
                line.raw("null")
            } else {
                // Hundredths of a degree, rounded half away from zero, as `fixed` would.
                let bits = Int(Int16(bitPattern: telemetry.temperatureBits))
                let hundredths = (abs(bits) * 100 + 128) / 256
                if bits < 0 && hundredths > 0 { line.byte(UInt8(ascii: "-")) }
                line.digits(UInt(hundredths), width: 1, point: 2)
            }
            line.raw(",\"advertising_count\":")
            line.digits(UInt(telemetry.advertisingCount), width: 1)
            line.raw(",\"uptime_s\":")
            line.digits(UInt(telemetry.uptimeTenths), width: 1, point: 1)
            line.byte(UInt8(ascii: "}"))
        case .encrypted(let telemetry):
            line.raw(",\"telemetry\":{\"encrypted\":\"")
            Self.hex(telemetry.encrypted, to: &line)
            line.raw("\",\"salt\":\"")
            Self.hex(bigEndian: telemetry.salt, to: &line)
            line.raw("\",\"mic\":\"")
            Self.hex(bigEndian: telemetry.integrityCheck, to: &line)
            line.raw("\"}")
        }
    }

    /// Upper-case hex digits, as `loyalty decode` writes them.
    private static func hex(_ bytes: [UInt8], to line: inout ByteCursor) {
        for byte in bytes {
            line.byte(hexDigit(byte >> 4))
            line.byte(hexDigit(byte & 0x0F))
        }
    }

    private static func hex(bigEndian value: UInt16, to line: inout ByteCursor) {
        hex([UInt8(value >> 8), UInt8(truncatingIfNeeded: value)], to: &line)
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x37 + value }

    /// Where `openings` holds `{"uuid":..,"major":..,"minor":..,"rssi":` for `identity`.
    @inline(always)
    private mutating func opening(of identity: BeaconIdentity, kind: BeaconKind) -> Range<Int> {
        // Fibonacci hashing of major and minor (or an Eddystone beacon's instance or EID), so that neighbouring
        // minors land apart; the slot beside it is the second place to look, so that two beacons of one slot do
        // not take it from each other line after line.
        let key = identity.distinguishingBits
        let first = Int(truncatingIfNeeded: (key &* 0x9E37_79B1) >> (32 - Self.slotBits))
        let slot =
            holds(first, identity)
            ? first : holds(first ^ 1, identity) ? first ^ 1 : makeOpening(of: identity, kind: kind, near: first)
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
    private mutating func makeOpening(of identity: BeaconIdentity, kind: BeaconKind, near first: Int) -> Int {
        let slot = holders[first].count > 0 && holders[first ^ 1].count == 0 ? first ^ 1 : first
        let count = openings.withUnsafeMutableBufferPointer { openings in
            var text = ByteCursor(openings.baseAddress! + slot * Self.slotSize)
            switch kind {
            case .eddystoneUID:
                let uid = identity.eddystoneUID
                text.raw("{\"kind\":\"eddystone-uid\",\"namespace\":\"")
                Self.hex(uid.namespace.bytes, to: &text)
                text.raw("\",\"instance\":\"")
                Self.hex(uid.instance, to: &text)
                text.raw("\",\"rssi\":")
                return text.count
            case .eddystoneEID:
                text.raw("{\"kind\":\"eddystone-eid\",\"eid\":\"")
                Self.hex(identity.ephemeralID.bytes, to: &text)
                text.raw("\",\"rssi\":")
                return text.count
            default:
                break
            }
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
