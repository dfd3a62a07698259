@testable import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient
import Testing

@testable import LoyaltyCLI

/// The shopper's screen, byte for byte: beacons by name in their proximity's colour, the offer as a banner on
/// its category's colour, everything escaped and cut to the width.
@Suite struct ScanScreenLinesTests {
    let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let id = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    let mateys = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!

    func beacon(_ minor: UInt16, _ proximity: Proximity, uuid: UUID? = nil) -> RangedBeacon {
        RangedBeacon(
            identity: BeaconIdentity(uuid: uuid ?? mateys, major: 1, minor: minor), kind: .iBeacon, proximity: proximity,
            distance: proximity == .unknown ? nil : 1.26, rssi: -61.4, lastRSSI: -61, measuredPower: -59,
            address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), lastSeen: 9)
    }

    @Test func beaconsGoByTheirRetailersNameInTheirProximitysColour() {
        let screen = ScanScreen(columns: 80, style: .colors, retailerNames: [mateys: "Matey's"])
        let snapshot = RangingSnapshot(
            time: 10, beacons: [beacon(1, .immediate), beacon(2, .near), beacon(3, .far), beacon(4, .unknown), beacon(5, .far, uuid: id)])
        let lines = screen.beaconLines(snapshot)
        #expect(lines[0] == "BEACON         PROXIMITY  DISTANCE  RSSI  LAST SEEN")
        #expect(lines[1] == "\u{1B}[91mMatey's 1:1    immediate  1.3 m     -61   1.0 s ago\u{1B}[0m")
        #expect(lines[2] == "\u{1B}[38;5;208mMatey's 1:2    near       1.3 m     -61   1.0 s ago\u{1B}[0m")
        #expect(lines[3] == "\u{1B}[94mMatey's 1:3    far        1.3 m     -61   1.0 s ago\u{1B}[0m")
        #expect(lines[4] == "\u{1B}[2mMatey's 1:4    unknown    -         -61   1.0 s ago\u{1B}[0m")
        #expect(lines[5] == "\u{1B}[94m00000000… 1:5  far        1.3 m     -61   1.0 s ago\u{1B}[0m")
        #expect(ScanScreen(columns: 80, style: .plain, retailerNames: [:]).beaconLines(RangingSnapshot(time: 1, beacons: []))
            == ["BEACON  PROXIMITY  DISTANCE  RSSI  LAST SEEN", "(no beacons in range)"])
    }

    @Test func aLongRetailerNameIsCutToTheWidthKeepingTheBeaconsNumbers() {
        let name = "The Very Long Name Of A Department Store On Oxford Street"
        let screen = ScanScreen(columns: 80, style: .plain, retailerNames: [mateys: name])
        let lines = screen.beaconLines(RangingSnapshot(time: 10, beacons: [beacon(12, .near)]))
        #expect(lines.allSatisfy { TerminalCells.count($0) <= 79 }, "\(lines)")
        #expect(lines[1].hasPrefix("The Very Long Name Of A Departmen… 1:12  near"), "\(lines)")
    }

    @Test func anOfferIsABannerOnItsCategorysColourWithItsDescriptionAndEndDate() {
        let retailer = CatalogRetailer(id: id, name: "Matey's\u{1B}[2J", uuid: id)
        var offer = Offer(id: id, retailerID: id, major: 1, minor: 2, title: "sushi <b>30%</b>", updatedAt: epoch)
        offer.description = "Nigiri and maki,\u{7}all day"
        offer.category = " Food"
        offer.endsAt = epoch
        let resolved = ResolvedOffer(offer: offer, retailer: retailer)
        let banner = ScanScreen(columns: 80, style: .colors, retailerNames: [:]).offerBanner(resolved, waiting: 2)
        let (blue, reset) = ("\u{1B}[1;97;44m", "\u{1B}[0m")
        func spaces(_ count: Int) -> String { String(repeating: " ", count: count) }
        #expect(banner == [
            blue + #" OFFER from Matey's\u001B[2J: sushi <b>30%</b>"# + spaces(4) + "until 15 Jan 2027, 08:00 UTC " + reset,
            blue + #" Nigiri and maki,\u0007all day"# + spaces(49) + reset,
            blue + " [d] dismiss  [r] redeem" + spaces(33) + "2 more offers waiting " + reset,
        ])
        #expect(banner.allSatisfy { TerminalCells.count($0) == 79 }, "\(banner)")
        // Too narrow for the title and the date on one line: the date goes under it.
        let narrow = ScanScreen(columns: 60, style: .plain, retailerNames: [:]).offerBanner(resolved)
        #expect(narrow[0...1] == [#" OFFER from Matey's\u001B[2J: sushi <b>30%</b>"#, " until 15 Jan 2027, 08:00 UTC"])
        offer.category = "clothing"
        offer.description = nil
        let red = ScanScreen(columns: 60, style: .colors, retailerNames: [:]).offerBanner(ResolvedOffer(offer: offer, retailer: retailer))
        #expect(red.allSatisfy { $0.hasPrefix("\u{1B}[1;97;41m") && TerminalCells.count($0) == 59 }, "\(red)")
        offer.category = "toys"
        let plain = ScanScreen(columns: 80, style: .plain, retailerNames: [:]).offerBanner(ResolvedOffer(offer: offer, retailer: retailer))
        #expect(plain == [#" OFFER from Matey's\u001B[2J: sushi <b>30%</b>    until 15 Jan 2027, 08:00 UTC"#, " [d] dismiss  [r] redeem"])
        #expect(BannerColor(category: "toys") == .neutral && BannerColor(category: nil) == .neutral)
    }

    @Test func aLongTitleWrapsAndIsCutWithinTheBanner() {
        let retailer = CatalogRetailer(id: id, name: "Arcade", uuid: id)
        let title = String(repeating: "寿司 ", count: 60)
        let offer = Offer(id: id, retailerID: id, major: 1, minor: 2, title: title, updatedAt: epoch)
        let banner = ScanScreen(columns: 80, style: .colors, retailerNames: [:]).offerBanner(ResolvedOffer(offer: offer, retailer: retailer))
        #expect(banner.count == 3, "\(banner)")
        #expect(banner.allSatisfy { TerminalCells.count($0) == 79 }, "\(banner)")
        #expect(banner[1].contains("…"))
    }

    @Test func storeEventsAreEscaped() {
        let retailer = CatalogRetailer(id: id, name: "Matey's\u{1B}[2J", uuid: id)
        let store = RetailStore(
            id: id, retailerID: id, storeID: "carnaby", name: "Carnaby", latitude: 51.5, longitude: -0.14,
            radiusMetres: 100, updatedAt: epoch)
        let resolved = ResolvedStore(store: store, retailer: retailer)
        #expect(ClientText.storeEvent(entered: true, resolved) == #"entered Carnaby (Matey's\u001B[2J)"#)
        #expect(ClientText.storeEvent(entered: false, resolved) == #"left Carnaby (Matey's\u001B[2J)"#)
    }

    @Test func colourFollowsTheChoiceTermAndNoColor() {
        let term = ["TERM": "xterm-256color"]
        #expect(ScreenStyle(.auto, standardOutputIsTerminal: true, environment: term).colored)
        #expect(!ScreenStyle(.auto, standardOutputIsTerminal: false, environment: term).colored)
        #expect(!ScreenStyle(.auto, standardOutputIsTerminal: true, environment: ["TERM": "dumb"]).colored)
        #expect(!ScreenStyle(.auto, standardOutputIsTerminal: true, environment: [:]).colored)
        #expect(!ScreenStyle(.auto, standardOutputIsTerminal: true, environment: term.merging(["NO_COLOR": "1"]) { $1 }).colored)
        #expect(ScreenStyle(.auto, standardOutputIsTerminal: true, environment: term.merging(["NO_COLOR": ""]) { $1 }).colored)
        #expect(ScreenStyle(.always, standardOutputIsTerminal: false, environment: ["NO_COLOR": "1"]).colored)
        #expect(!ScreenStyle(.never, standardOutputIsTerminal: true, environment: term).colored)
    }

    @Test func whatTheScanSaysWhenItsBeaconsEndWithOffersLeft() {
        #expect(
            ClientText.offersLeft(after: "capture ended", waiting: 2, asking: true)
                == "capture ended: 2 more offers; d next, r redeem, q quit")
        #expect(
            ClientText.offersLeft(after: "capture ended", waiting: 0, asking: true)
                == "capture ended: d dismiss, r redeem, q quit")
        #expect(
            ClientText.offersLeft(after: "interrupted", waiting: 1, asking: false) == "interrupted: 1 more offer not shown")
        #expect(
            ClientText.eventLine(at: 1_800_000_000.25, "entered Carnaby (Matey's)")
                == "2027-01-15T08:00:00.250Z  entered Carnaby (Matey's)")
    }

    /// Each draw goes back up over the rows the last table took (a long line takes more than one; colours
    /// take none) and clears from there.
    @Test func theLiveTableErasesTheRowsItTook() {
        var table = LiveTable()
        #expect(table.draw("A\nB\n", columns: 80) == "A\nB\n")
        #expect(table.draw("C\n" + String(repeating: "x", count: 81) + "\n", after: "event", columns: 80)
            == "\r\u{1B}[2A\u{1B}[Jevent\nC\n" + String(repeating: "x", count: 81) + "\n")
        #expect(table.erasure == "\r\u{1B}[3A\u{1B}[J")
        #expect(table.draw("\u{1B}[1;97;44m" + String(repeating: "x", count: 80) + "\u{1B}[0m\n", columns: 80)
            == "\r\u{1B}[3A\u{1B}[J\u{1B}[1;97;44m" + String(repeating: "x", count: 80) + "\u{1B}[0m\n")
        #expect(table.erasure == "\r\u{1B}[1A\u{1B}[J")
        #expect(table.draw("", columns: 0) == "\r\u{1B}[1A\u{1B}[J")
        #expect(table.erasure == "")
    }
}
