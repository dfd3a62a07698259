import Foundation
import LoyaltyAPI
import LoyaltyCLI
import LoyaltyClient
import Testing

/// What the retailer commands that change one thing print, as text and JSON lines, byte for byte.
@Suite struct RetailerResultLinesTests {
    let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let id = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!

    @Test func text() {
        let offer = Offer(id: id, retailerID: id, major: 1, minor: 2, title: "sushi \"30%\"", updatedAt: epoch)
        #expect(
            ClientText.offerSet(offer)
                == #"offer at 1:2 set: "sushi "30%"" (id 00000000-0000-0000-0000-00000000000a)"#)
        let store = RetailStore(
            id: id, retailerID: id, storeID: "carnaby", name: "Carnaby", latitude: 51.5, longitude: -0.14,
            radiusMetres: 100, updatedAt: epoch)
        #expect(ClientText.storeSet(store) == "store carnaby set: Carnaby at 51.5,-0.14, radius 100 m")
        let key = TillKeyCredentials(id: id, name: "till 1", createdAt: epoch, tillKey: "lt_x")
        #expect(
            ClientText.tillKeyCreated(key)
                == "till key for till 1 (id 00000000-0000-0000-0000-00000000000a), shown only now:\nlt_x")
        #expect(
            ClientText.keyRotated("lr_new", savedIn: "/home/a/config.json")
                == "API key rotated; the new key is saved in /home/a/config.json")
        #expect(ClientText.keyRotated("lr_new", savedIn: nil) == "API key rotated; new key (shown once): lr_new")
    }

    /// Text the server sent never drives the terminal, even from a server that let it through.
    @Test func serverTextIsEscaped() {
        let hostile = "x\u{1B}[2Jy"
        let offer = Offer(id: id, retailerID: id, major: 1, minor: 2, title: hostile, updatedAt: epoch)
        let store = RetailStore(
            id: id, retailerID: id, storeID: hostile, name: hostile, latitude: 0, longitude: 0, radiusMetres: 1,
            updatedAt: epoch)
        let key = TillKeyCredentials(id: id, name: hostile, createdAt: epoch, tillKey: "lt_x")
        for line in [ClientText.offerSet(offer), ClientText.storeSet(store), ClientText.tillKeyCreated(key)] {
            #expect(!line.unicodeScalars.contains("\u{1B}") && line.contains(TerminalText.escaped(hostile)), "\(line)")
        }
    }

    @Test func jsonLines() {
        #expect(ClientJSONLines.offerRemoved(major: 1, minor: 2) == #"{"event":"offer_removed","major":1,"minor":2}"#)
        #expect(ClientJSONLines.storeRemoved("carnaby") == #"{"event":"store_removed","store_id":"carnaby"}"#)
        #expect(
            ClientJSONLines.tillKeyRevoked(id)
                == #"{"event":"till_key_revoked","id":"00000000-0000-0000-0000-00000000000a"}"#)
    }
}
