import Beacons
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of the beacon tools: `loyalty decode` and `loyalty beacon calibrate --json`.
public enum BeaconJSONLines {
    /// One line per beacon frame in advertising data, `{"kind":"none"}` for none.
    public static func decoded(advertisingData bytes: [UInt8]) throws(MalformedPacket) -> [String] {
        let frames = try AdvertisingData.frames(in: bytes).map { JSONValue.object(fields($0)).text }
        return frames.isEmpty ? [JSONValue.object([("kind", .string("none"))]).text] : frames
    }

    /// A malformed argument of `decode`, named by its position among `count` and its first characters:
    /// the error for standard error and, for --json, the line in its place.
    public static func decodeFailure(_ text: String, argument index: Int, of count: Int, _ message: String)
        -> (error: String, line: String)
    {
        let input = text.count > 24 ? text.prefix(24) + "..." : Substring(text)
        var quoted = JSONLineBuffer(capacity: 64)
        quoted.string(String(input))
        let line = JSONValue.object([
            ("kind", .string("error")), ("argument", .int(index)), ("input", .string(String(input))),
            ("error", .string(message)),
        ]).text
        return ("error: argument \(index) of \(count) (\(String(decoding: quoted.bytes, as: UTF8.self))): \(message)", line)
    }

    /// One line per beacon frame of each report in an HCI event (H4 framing optional), with the report's
    /// address and RSSI; `{"kind":"none",...}` for a report without one. Nothing for a malformed event.
    public static func decoded(event bytes: [UInt8]) throws(MalformedPacket) -> [String] {
        var lines: [String] = []
        for report in try HCIEvent.advertisingReports(inPacket: bytes) {
            let sender: [(String, JSONValue)] = [
                ("address", .string(report.address.description)), ("rssi", .int(Int(report.rssi))),
            ]
            let frames = try AdvertisingData.frames(in: report.data)
            lines += (frames.isEmpty ? [[("kind", .string("none"))]] : frames.map(fields)).map {
                JSONValue.object($0 + sender).text
            }
        }
        return lines.isEmpty ? [JSONValue.object([("kind", .string("none"))]).text] : lines
    }

    /// The measured power to program, and how it was found; values rounded to a tenth.
    public static func calibration(
        _ calibration: MeasuredPowerCalibration, of identity: BeaconIdentity, advertised: Int8?, seconds: Double
    ) -> String {
        let rounded = { (value: Double) in JSONValue.double((value * 10).rounded() / 10) }
        return JSONValue.object([
            ("uuid", .string(identity.uuid.uuidString)), ("major", .int(Int(identity.major))),
            ("minor", .int(Int(identity.minor))), ("measured_power", .int(Int(calibration.measuredPower))),
            ("mean_rssi", rounded(calibration.meanRSSI)), ("median_rssi", rounded(calibration.medianRSSI)),
            ("spread_db", rounded(calibration.standardDeviation)), ("samples_used", .int(calibration.samplesUsed)),
            ("samples_rejected", .int(calibration.samplesRejected)), ("seconds", rounded(seconds)),
            ("advertised_measured_power", advertised.map { .int(Int($0)) } ?? .null),
        ]).text
    }

    private static func fields(_ frame: AdvertisedFrame) -> [(String, JSONValue)] {
        switch frame {
        case .beacon(let beacon): fields(beacon)
        case .eddystone(let eddystone): fields(eddystone)
        }
    }

    /// kind, uuid, major, minor, tx_power.
    private static func fields(_ frame: BeaconFrame) -> [(String, JSONValue)] {
        [
            ("kind", .string(frame.kind.rawValue)), ("uuid", .string(frame.identity.uuid.uuidString)),
            ("major", .int(Int(frame.identity.major))), ("minor", .int(Int(frame.identity.minor))),
            ("tx_power", .int(Int(frame.measuredPower))),
        ]
    }

    private static func bigEndianHex(_ value: UInt16) -> String {
        [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)].hexText()
    }

    /// kind (`eddystone-uid`, `-url`, `-tlm`, `-eid`) and the frame's fields; hex upper-case as a UUID's.
    /// `ranging_power` is the RSSI at 0 m the frame claims (iBeacon's `tx_power` is at 1 m).
    private static func fields(_ frame: EddystoneFrame) -> [(String, JSONValue)] {
        switch frame {
        case .uid(let uid, let power):
            [
                ("kind", .string("eddystone-uid")), ("namespace", .string(uid.namespace.description)),
                ("instance", .string(uid.instance.hexText())), ("ranging_power", .int(Int(power))),
            ]
        case .url(let url, let power):
            [("kind", .string("eddystone-url")), ("url", .string(url.description)), ("ranging_power", .int(Int(power)))]
        case .telemetry(let telemetry):
            [
                ("kind", .string("eddystone-tlm")), ("version", .int(0)),
                ("battery_mv", .int(Int(telemetry.batteryMillivolts))),
                ("temperature_c", telemetry.temperature.map(JSONValue.double) ?? .null),
                ("advertising_count", .int(Int(telemetry.advertisingCount))),
                ("uptime_s", .double(telemetry.uptimeSeconds)),
            ]
        case .encryptedTelemetry(let telemetry):
            [
                ("kind", .string("eddystone-tlm")), ("version", .int(1)),
                ("encrypted", .string(telemetry.encrypted.hexText())), ("salt", .string(bigEndianHex(telemetry.salt))),
                ("mic", .string(bigEndianHex(telemetry.integrityCheck))),
            ]
        case .eid(let eid, let power):
            [("kind", .string("eddystone-eid")), ("eid", .string(eid.description)), ("ranging_power", .int(Int(power)))]
        }
    }
}
