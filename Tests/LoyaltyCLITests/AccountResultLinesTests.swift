import Foundation
import LoyaltyAPI
import LoyaltyCLI
import LoyaltyClient
import Testing

/// What the account, device and registration commands print, as text and JSON lines, byte for byte.
@Suite struct AccountResultLinesTests {
    let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let id = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!

    @Test func text() {
        #expect(
            ClientText.linkCode(LinkCode(code: "K7M2-Q9XP-4HTD", expiresAt: epoch))
                == "link code: K7M2-Q9XP-4HTD\non the other device run: loyalty account link K7M2-Q9XP-4HTD\n(expires 2027-01-15T08:00:00Z)")
        #expect(
            ClientText.joined(DeviceCredentials(accountID: id, deviceID: uuid, deviceToken: "dt_x"), savedIn: "/h/device.json")
                == """
                account 00000000-0000-0000-0000-00000000000a, device 8f0c1ddc-11e5-4a07-8910-425941b072f9
                token saved in /h/device.json; run `loyalty sync` to fetch the offers
                """)
        #expect(ClientText.deviceRevoked(id) == "device 00000000-0000-0000-0000-00000000000a revoked: its token no longer works")
        #expect(
            ClientText.retailerRegistered(RetailerCredentials(id: id, name: "Matey's", uuid: uuid, apiKey: "lr_x"), savedIn: "/h/config.json")
                == """
                registered Matey's
                proximity UUID: 8F0C1DDC-11E5-4A07-8910-425941B072F9   (program it into your beacons)
                API key saved in /h/config.json
                """)
    }

    /// A server that sends control characters in a name or a code does not drive the terminal.
    @Test func serverTextIsEscaped() {
        let hostile = "x\u{1B}[2Jy"
        let lines = [
            ClientText.linkCode(LinkCode(code: hostile, expiresAt: epoch)),
            ClientText.retailerRegistered(RetailerCredentials(id: id, name: hostile, uuid: uuid, apiKey: "lr_x"), savedIn: "/h"),
        ]
        for line in lines {
            #expect(!line.unicodeScalars.contains("\u{1B}") && line.contains(TerminalText.escaped(hostile)), "\(line)")
        }
    }

    @Test func jsonLines() {
        #expect(
            ClientJSONLines.deviceRevoked(id)
                == #"{"event":"device_revoked","device_id":"00000000-0000-0000-0000-00000000000a"}"#)
        #expect(ClientJSONLines.keyRotated(saved: true) == #"{"event":"key_rotated","saved":true}"#)
    }
}
