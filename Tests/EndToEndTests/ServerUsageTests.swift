import Foundation
import LoyaltyTesting
import Testing

/// `loyalty-server`'s command line through the built program: its usage errors and its subcommand's help.
@Suite struct ServerUsageTests {
    let server = Binary("loyalty-server")

    @Test func proxyProtocolWithoutATrustedProxyIsAUsageError() throws {
        let result = try server.run(["--proxy-protocol"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--proxy-protocol: give the balancer's address with --trusted-proxy CIDR"))
        let bad = try server.run(["--trusted-proxy", "10.0.0.1/8"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--trusted-proxy: expected an address or CIDR block"), "\(bad.stderr)")
    }

    /// Before any database work: the log's last line names the file and the line.
    @Test func aBeaconKeyFileThatHoldsNoKeyStopsTheStart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-beacon-key-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("beacon-key")
        try Data("# a comment\nnot a key\n".utf8).write(to: file)
        let result = try server.run(
            ["--data-dir", directory.path, "--listen", "127.0.0.1:0", "--beacon-key-file", file.path],
            environment: ["LOYALTY_ADMIN_TOKEN": "token"])
        #expect(result.status == 1 && result.stderr.contains("beacon key file \(file.path): line 2"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("pg").path))
    }

    @Test func wrongWordsAreUsageErrorsAndHelpNamesTheCommand() throws {
        let extra = try server.run(["extra-word"])
        #expect(extra.status == 64 && extra.stdout.isEmpty)
        let lines = extra.stderr.split(separator: "\n")
        #expect(lines.first == "error: unexpected argument 'extra-word'", "\(extra.stderr)")
        #expect(lines.count == 3 && lines[1].hasPrefix("USAGE: loyalty-server [<command>] [--listen"), "\(extra.stderr)")
        let listen = try server.run(["--listen", "8080"])
        #expect(listen.status == 64 && listen.stderr.hasPrefix("error: --listen: expected HOST:PORT"), "\(listen.stderr)")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-server-usage-\(UUID())")
        #expect(try server.run(["--data-dir", home.path, "migrate", "--help"]).stdout.contains("USAGE: loyalty-server migrate"))
    }

    /// A replica or notification URL libpq cannot parse, or a lag that is not seconds, stops the start with a usage
    /// error naming the variable (before any database is touched); --help names them.
    @Test func badReplicaSettingsAreUsageErrors() throws {
        let url = try server.run([], environment: ["DATABASE_REPLICA_URL": "host=a port"])
        #expect(
            url.status == 64 && url.stderr.hasPrefix("error: DATABASE_REPLICA_URL: expected a libpq connection string"),
            "\(url.stderr)")
        for lag in ["soon", "-1", "inf"] {
            let refused = try server.run([], environment: ["DATABASE_REPLICA_MAX_LAG": lag])
            #expect(
                refused.status == 64 && refused.stderr.hasPrefix("error: DATABASE_REPLICA_MAX_LAG: expected seconds"),
                "\(lag): \(refused.stderr)")
        }
        let notify = try server.run([], environment: ["DATABASE_NOTIFY_URL": "host=a port"])
        #expect(
            notify.status == 64 && notify.stderr.hasPrefix("error: DATABASE_NOTIFY_URL: expected a libpq connection string"),
            "\(notify.stderr)")
        let help = try server.run(["--help"]).stdout
        #expect(help.contains("DATABASE_REPLICA_URL") && help.contains("DATABASE_REPLICA_MAX_LAG"), "\(help)")
        #expect(help.contains("DATABASE_NOTIFY_URL"), "\(help)")
    }
}
