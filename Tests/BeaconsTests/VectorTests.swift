import Beacons
import Foundation
import Testing

/// One entry of `vectors.json` (see the fixtures README).
struct Vector: Decodable, CustomTestStringConvertible, Sendable {
    struct Beacon: Decodable, Sendable {
        var uuid: String
        var major: UInt16
        var minor: UInt16
        var tx_power: Int8
        var rssi: Int8?
        var address: String?
    }

    enum Expectation: Decodable, Sendable {
        case beacons([Beacon])
        case error

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self), text == "error" {
                self = .error
            } else {
                self = .beacons(try container.decode([Beacon].self))
            }
        }
    }

    var name: String
    var input: String
    var hex: String
    var expect: Expectation

    var testDescription: String { name }

    static let all: [Vector] = {
        let url = fixturesDirectory.appendingPathComponent("vectors.json")
        guard let data = try? Data(contentsOf: url), let vectors = try? JSONDecoder().decode([Vector].self, from: data)
        else { return [] }
        return vectors
    }()
}

/// A beacon as the vectors describe it, from what the parsers returned.
struct DecodedBeacon: Equatable, CustomStringConvertible {
    var uuid: String
    var major: UInt16
    var minor: UInt16
    var txPower: Int8
    var rssi: Int8?
    var address: String?

    init(_ frame: BeaconFrame, rssi: Int8? = nil, address: BluetoothAddress? = nil) {
        uuid = frame.identity.uuid.uuidString
        major = frame.identity.major
        minor = frame.identity.minor
        txPower = frame.measuredPower
        self.rssi = rssi
        self.address = address?.description
    }

    var description: String {
        "\(uuid) \(major)/\(minor) tx \(txPower) rssi \(rssi.map(String.init) ?? "-") \(address ?? "-")"
    }
}

/// Vectors whose expected address is not the one their bytes hold. blemon_govee_h5075's event carries the
/// address bytes 11 6C 24 38 C1 A4, i.e. A4:C1:38:24:6C:11 (a Govee OUI); its expectation repeats the address
/// of blemon_ibeacon_sensor. The test checks the address the bytes hold.
let addressErrata = ["blemon_govee_h5075": "A4:C1:38:24:6C:11"]

@Suite struct VectorTests {
    @Test func allThirtyVectorsAreThere() {
        #expect(Vector.all.count == 30)
    }

    @Test(arguments: Vector.all)
    func vectorDecodesExactly(_ vector: Vector) throws {
        let input = try #require(bytes(hex: vector.hex), "vector hex is not hex")
        switch vector.expect {
        case .error:
            #expect(throws: MalformedPacket.self) { try decode(input, as: vector.input) }
        case .beacons(let expected):
            let decoded = try decode(input, as: vector.input)
            let wanted = expected.map { beacon in
                let hasReport = vector.input == "hci"
                return DecodedBeacon(
                    uuid: beacon.uuid, major: beacon.major, minor: beacon.minor, txPower: beacon.tx_power,
                    rssi: hasReport ? beacon.rssi : nil,
                    address: hasReport ? (addressErrata[vector.name] ?? beacon.address) : nil)
            }
            // The vectors name rssi and address only for some HCI entries: compare those fields where given.
            let comparable = zip(decoded, wanted).map { decoded, wanted in
                var decoded = decoded
                if wanted.rssi == nil { decoded.rssi = nil }
                if wanted.address == nil { decoded.address = nil }
                return decoded
            }
            #expect(decoded.count == wanted.count)
            #expect(comparable == wanted)
        }
    }

    private func decode(_ input: [UInt8], as kind: String) throws -> [DecodedBeacon] {
        if kind == "ad" {
            return try AdvertisingData.beaconFrames(in: input).map { DecodedBeacon($0) }
        }
        var beacons: [DecodedBeacon] = []
        for report in try HCIEvent.advertisingReports(inPacket: input) {
            for frame in try AdvertisingData.beaconFrames(in: report.data) {
                beacons.append(DecodedBeacon(frame, rssi: report.rssi, address: report.address))
            }
        }
        return beacons
    }
}

extension DecodedBeacon {
    init(uuid: String, major: UInt16, minor: UInt16, txPower: Int8, rssi: Int8?, address: String?) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.txPower = txPower
        self.rssi = rssi
        self.address = address
    }
}
