import Foundation
import LoyaltyTesting
import Testing

/// The console in Debian's chromium, driven by Selenium (Tests/Browser/console_test.py) against the real
/// `loyalty-server`, at a laptop's 1280x900 and a phone's 390x844: offers, the fleet, figures, stores, till, keys,
/// import, sign-out; on every page no element past the screen's edge, no browser log error and axe-core clean.
/// `make test` installs chromium, chromium-driver, selenium and axe-selenium-python (make browser-deps).
/// Screenshots go to .build/console-screenshots/ (a set of them is in docs/screenshots/console/).
@Suite struct ConsoleBrowserTests {

    @Test(.timeLimit(.minutes(4))) func theConsoleWorksInARealBrowser() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(
                FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: run make browser-deps")
        }
        let server = try StoryServer.shared.get()
        let screenshots = Repository.root.appendingPathComponent(".build/console-screenshots")
        try? FileManager.default.removeItem(at: screenshots)
        let result = try Binary(at: "python3").run(
            [
                Repository.root.appendingPathComponent("Tests/Browser/console_test.py").path,
                "--server", server.url, "--operator-token", server.operatorToken,
                "--screenshots", screenshots.path,
            ], timeout: 210)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok: signed out; the session is gone"), "\(result.stdout)")
        #expect(result.stdout.contains("ok: phone: every page"), "\(result.stdout)")
        #expect(result.stdout.contains("9:9 made secure, its key shown once"), "\(result.stdout)")
        let shots = try FileManager.default.contentsOfDirectory(atPath: screenshots.path).filter { $0.hasSuffix(".png") }
        #expect(shots.count == 21, "\(shots)")
    }
}
