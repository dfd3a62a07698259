import Foundation
import LoyaltyTesting
import Testing

/// The live table in a window too short for it: cut to fit, so that every redraw can go back up over all
/// of it, with the offer under it still on screen.
@Suite struct TerminalWindowTests {
    @Test func aTableTallerThanTheWindowIsCutAndStillRedrawnInPlace() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let retailer = try server.retailer("Window arcade", uuid: uuid)
        try retailer.setOffer(1, 1, "寿司 30% off 🍣", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])
        let walk = try server.walk((1...12).map { "\(uuid):1:\($0)@0=2,20=2" })
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper, rows: 10, columns: 100)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: d dismiss, r redeem, q quit"), "\(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        let transcript = scan.transcript
        #expect(transcript.contains("OFFER from Window arcade: 寿司 30% off 🍣"), "\(transcript)")
        #expect(transcript.contains("more lines: the window is too short)"), "\(transcript)")
        // Every erasure goes up at most the nine rows above the cursor's.
        let ups = transcript.components(separatedBy: "\u{1B}[").dropFirst().compactMap { part in
            part.firstIndex(of: "A").flatMap { Int(part[..<$0]) }
        }
        #expect(!ups.isEmpty && ups.allSatisfy { $0 <= 9 }, "\(ups)")
    }
}
