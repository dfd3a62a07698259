import Foundation
import LoyaltyAPI
import LoyaltyCLI
import LoyaltyClient
import Testing

/// The offer notice and store lines a scan shows on a terminal, escaped, byte for byte.
@Suite struct ScanScreenLinesTests {
    let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let id = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!

    @Test func offerNoticeAndStoreEvents() {
        let retailer = CatalogRetailer(id: id, name: "Matey's\u{1B}[2J", uuid: id)
        let offer = Offer(id: id, retailerID: id, major: 1, minor: 2, title: "sushi", updatedAt: epoch)
        #expect(
            ClientText.offerNotice(ResolvedOffer(offer: offer, retailer: retailer))
                == #"OFFER from Matey's\u001B[2J: sushi    [d] dismiss  [r] redeem"#)
        #expect(
            ClientText.offerNotice(ResolvedOffer(offer: offer, retailer: retailer), waiting: 2)
                == #"OFFER from Matey's\u001B[2J: sushi    [d] dismiss  [r] redeem    2 more offers waiting"#)
        let store = RetailStore(
            id: id, retailerID: id, storeID: "carnaby", name: "Carnaby", latitude: 51.5, longitude: -0.14,
            radiusMetres: 100, updatedAt: epoch)
        let resolved = ResolvedStore(store: store, retailer: retailer)
        #expect(ClientText.storeEvent(entered: true, resolved) == #"entered Carnaby (Matey's\u001B[2J)"#)
        #expect(ClientText.storeEvent(entered: false, resolved) == #"left Carnaby (Matey's\u001B[2J)"#)
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

    /// Each draw goes back up over the rows the last table took (a long line takes more than one) and
    /// clears from there.
    @Test func theLiveTableErasesTheRowsItTook() {
        var table = LiveTable()
        #expect(table.draw("A\nB\n", columns: 80) == "A\nB\n")
        #expect(table.draw("C\n" + String(repeating: "x", count: 81) + "\n", after: "event", columns: 80)
            == "\r\u{1B}[2A\u{1B}[Jevent\nC\n" + String(repeating: "x", count: 81) + "\n")
        #expect(table.erasure == "\r\u{1B}[3A\u{1B}[J")
        #expect(table.draw("", columns: 0) == "\r\u{1B}[3A\u{1B}[J")
        #expect(table.erasure == "")
    }
}
