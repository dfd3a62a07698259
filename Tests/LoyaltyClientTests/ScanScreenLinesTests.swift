import Foundation
import LoyaltyAPI
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
        let store = RetailStore(
            id: id, retailerID: id, storeID: "carnaby", name: "Carnaby", latitude: 51.5, longitude: -0.14,
            radiusMetres: 100, updatedAt: epoch)
        let resolved = ResolvedStore(store: store, retailer: retailer)
        #expect(ClientText.storeEvent(entered: true, resolved) == #"entered Carnaby (Matey's\u001B[2J)"#)
        #expect(ClientText.storeEvent(entered: false, resolved) == #"left Carnaby (Matey's\u001B[2J)"#)
    }
}
