import Foundation
import LoyaltyTesting
import Testing

/// The console in Debian's chromium, driven by Selenium (Tests/Browser/console_test.py) against the real
/// `loyalty-server`: sign in, offers, import, chart, till, keys, sign-out, with axe-core on every page.
/// `make test` installs chromium, chromium-driver, selenium and axe-selenium-python (make browser-deps).
/// Screenshots go to .build/console-screenshots/.
@Suite struct ConsoleBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(.timeLimit(.minutes(3))) func theConsoleWorksInARealBrowser() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(
                FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: run make browser-deps")
        }
        let server = try StoryServer.shared.get()
        let screenshots = Self.repository.appendingPathComponent(".build/console-screenshots")
        try? FileManager.default.removeItem(at: screenshots)
        let result = try Binary(at: "python3").run(
            [
                Self.repository.appendingPathComponent("Tests/Browser/console_test.py").path,
                "--server", server.url, "--operator-token", server.operatorToken,
                "--screenshots", screenshots.path,
            ], timeout: 150)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok: signed out; the session is gone"), "\(result.stdout)")
        let shots = try FileManager.default.contentsOfDirectory(atPath: screenshots.path).filter { $0.hasSuffix(".png") }
        #expect(shots.count >= 10, "\(shots)")
    }
}
