import Foundation
import LoyaltyTesting
import Postgres
import Testing

/// A test run killed before its exit handlers (a deadline, SIGKILL) leaves no cluster running (issue 41, item 16):
/// this test binary is run again as a child that starts the shared cluster, the child is killed, and the cluster's
/// postmaster is gone soon after, its directories too.
@Suite struct OrphanedClusterTests {
    private static let reportVariable = "LOYALTY_ORPHAN_REPORT"

    /// Only in the child the test below starts: starts the shared cluster, says where its socket is, and waits to
    /// be killed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[reportVariable] != nil))
    func childKeepsTheSharedClusterUntilKilled() throws {
        let report = try #require(ProcessInfo.processInfo.environment[Self.reportVariable])
        let socket = try EmbeddedPostgres.shared().socket()
        try Data("\(socket.directory.path)\n\(socket.clusterDirectory.path)\n".utf8)
            .write(to: URL(fileURLWithPath: report + ".partial"))
        rename(report + ".partial", report)
        sleep(600)
    }

    @Test func aKilledTestProcessLeavesNoClusterRunning() throws {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("orphan-\(UUID())").path
        defer { unlink(report) }
        let child = try EmbeddedPostgres.launch(
            [
                CommandLine.arguments[0], "--testing-library", "swift-testing",
                "--filter", "OrphanedClusterTests/childKeepsTheSharedClusterUntilKilled",
            ],
            environment: [Self.reportVariable: report], output: nil)
        var reported: [String] = []
        for _ in 0..<1200 where reported.isEmpty {
            reported = ((try? String(contentsOfFile: report, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if reported.isEmpty { usleep(100_000) }
        }
        try #require(reported.count == 2, "the child did not start its cluster in 120 s")
        let lock = try #require(
            try FileManager.default.contentsOfDirectory(atPath: reported[0]).first { $0.hasSuffix(".lock") })
        let postmaster = try #require(
            pid_t(try String(contentsOfFile: reported[0] + "/" + lock, encoding: .utf8).prefix { $0 != "\n" }))
        #expect(kill(postmaster, 0) == 0)

        kill(child, SIGKILL)
        var status: Int32 = 0
        waitpid(child, &status, 0)
        var alive = true
        for _ in 0..<300 where alive {
            alive = kill(postmaster, 0) == 0
            if alive { usleep(100_000) }
        }
        #expect(!alive, "the postmaster \(postmaster) outlived the killed test process by 30 s")
        for _ in 0..<50 where FileManager.default.fileExists(atPath: reported[1]) { usleep(100_000) }
        #expect(!FileManager.default.fileExists(atPath: reported[1]), "\(reported[1]) was left behind")
    }
}
