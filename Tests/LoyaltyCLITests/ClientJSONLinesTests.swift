import Beacons
import Foundation
import LoyaltyAPI
import Testing

@testable import LoyaltyCLI
import LoyaltyClient

/// The `--json` lines of the client commands and beacon tools, byte for byte.
@Suite struct ClientJSONLinesTests {
    let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let id = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!

    @Test func apiValuesKeepTheirKeyOrderAndNulls() {
        let offer = Offer(
            id: id, retailerID: id, major: 1, minor: 2, title: "sushi \"30%\"", category: "food", endsAt: epoch,
            updatedAt: epoch)
        #expect(
            ClientJSONLines.offer(offer)
                == #"{"id":"00000000-0000-0000-0000-00000000000a","major":1,"minor":2,"title":"sushi \"30%\"","description":null,"category":"food","image_url":null,"starts_at":null,"ends_at":"2027-01-15T08:00:00Z","per_shopper_limit":1,"total_limit":null,"reshow_after_s":null,"schedule":null,"shows_per_day":null}"#
        )
        let store = RetailStore(
            id: id, retailerID: id, storeID: "carnaby", name: "Carnaby", latitude: 51.5, longitude: -0.14,
            radiusMetres: 100, updatedAt: epoch)
        #expect(
            ClientJSONLines.store(store)
                == #"{"id":"00000000-0000-0000-0000-00000000000a","store_id":"carnaby","name":"Carnaby","latitude":51.5,"longitude":-0.14,"radius_m":100}"#
        )
        #expect(ClientJSONLines.catalogPartial.hasPrefix(#"{"event":"warning","code":"catalog_partial","message":"#))
    }

    @Test func decodedBeaconsOneLinePerFrame() throws {
        let frame = BeaconFrame(
            kind: .iBeacon,
            identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 1),
            measuredPower: -59)
        let data = AdvertisingData.beacon(frame)
        let line =
            #"{"kind":"ibeacon","uuid":"8F0C1DDC-11E5-4A07-8910-425941B072F9","major":1,"minor":1,"tx_power":-59"#
        #expect(try BeaconJSONLines.decoded(advertisingData: data) == [line + "}"])
        #expect(try BeaconJSONLines.decoded(advertisingData: [0x02, 0x01, 0x06]) == [#"{"kind":"none"}"#])
        let report = AdvertisingReport(
            format: .legacy, eventType: 3, addressType: 1, address: BluetoothAddress(wire: (6, 5, 4, 3, 2, 1)),
            rssi: -70, data: data)
        let event = try HCIEvent.advertisingReportEvent([report, report], format: .legacy)
        let sender = #","address":"\#(report.address.description)","rssi":-70}"#
        #expect(try BeaconJSONLines.decoded(event: event) == [line + sender, line + sender])
        #expect(throws: MalformedPacket.self) { try BeaconJSONLines.decoded(event: Array(event.dropLast())) }
    }
}
