import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Ctrl-Z and `fg` during `loyalty scan` on a terminal: stopped, the scan leaves the terminal as it found
/// it; continued, it takes single keys again and draws its table anew.
@Suite struct TerminalStopTests {
    /// The state letter of /proc/PID/stat (T: stopped).
    private static func state(of pid: Int32) -> Character? {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[close...].dropFirst(2).first
    }

    @Test func aStoppedScanGivesTheTerminalBackAndTakesKeysAgainWhenContinued() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, _) = try TerminalScanTests.walkPastThreeOffers(server, name: "Stop arcade")
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper)
        defer { scan.kill() }
        let pid = scan.process.processIdentifier
        #expect(scan.waitFor("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO) == 0, "the scan reads single keys")

        kill(pid, SIGTSTP)
        #expect(scan.waitFor(seconds: 10) { Self.state(of: pid) == "T" }, "stopped")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON), "the shell's terminal")
        scan.setCanonical()
        let drawn = scan.transcript.utf8.count

        kill(pid, SIGCONT)
        #expect(scan.waitFor(seconds: 10) { scan.localModes() & tcflag_t(ECHO | ICANON) == 0 }, "single keys again")
        // Waiting for a key, the scan draws nothing of its own: this is the redraw, afresh below the cursor
        // (no erasure: the rows above are the shell's now).
        let since = { String(decoding: scan.transcript.utf8.dropFirst(drawn), as: UTF8.self) }
        #expect(scan.waitFor(seconds: 10) { since().contains("capture ended: 2 more offers; d next") }, "\(since())")
        #expect(!since().hasPrefix("\r\u{1B}["), "\(since())")
        scan.send("d")  // no Enter
        #expect(scan.waitFor("capture ended: 1 more offer; d next"), "\(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit(seconds: 10) == 0, "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
    }
}
