import Foundation
import LoyaltyTesting
import Postgres
import Testing

/// A request by curl from `source`, a loopback address of its own (127.0.0.2 is another client than 127.0.0.3):
/// its status, 0 when no answer came.
/// `caFile`: the CA an https server's certificate chains to.
private func status(
    _ url: String, from source: String, token: String? = nil, headers: [String] = [], caFile: URL? = nil
) throws -> Int {
    var arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--interface", source]
    if let caFile { arguments += ["--cacert", caFile.path] }
    if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
    for header in headers { arguments += ["-H", header] }
    return Int(try Binary(at: "/usr/bin/curl").run(arguments + [url]).stdout) ?? 0
}

/// The request lines of a server log: (client, status) in order.
private func requests(in log: String) -> [(client: String, status: Int)] {
    log.split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["event"] as? String == "request", let client = object["client"] as? String,
            let status = object["status"] as? Int
        else { return nil }
        return (client, status)
    }
}

/// Client addresses behind a balancer (issue 24, item 3), through the real binaries.
@Suite(.serialized) struct BalancerTests {
    /// Two instances behind HAProxy with send-proxy-v2: one client guessing tokens is locked out at both, while
    /// another client through the same balancer is not, and both instances' logs name each client.
    @Test func behindHAProxyEachClientHasItsOwnRateLimitsAndLogLines() throws {
        let databaseURL = try EmbeddedPostgres.shared().createDatabase(
            "balancer_\(UUID().uuidString.prefix(8).lowercased())")
        // As the systemd unit's environment file sets them (--proxy-protocol --trusted-proxy 127.0.0.1).
        let behindBalancer = ["LOYALTY_PROXY_PROTOCOL": "1", "LOYALTY_TRUSTED_PROXIES": "127.0.0.1"]
        let first = try LoyaltyServerProcess(databaseURL: databaseURL, environment: behindBalancer)
        defer { first.stop() }
        let second = try LoyaltyServerProcess(databaseURL: databaseURL, environment: behindBalancer)
        defer { second.stop() }
        let balancer = try HAProxy(servers: [first.port, second.port])
        defer { balancer.stop() }
        let api = "https://127.0.0.1:\(balancer.port)"

        // Both instances in the rotation: HAProxy's /readyz checks (PROXY headers with the LOCAL command) pass.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, requests(in: first.log).isEmpty || requests(in: second.log).isEmpty {
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(requests(in: first.log).contains { $0.client == "127.0.0.1" && $0.status == 200 }, "\(first.log)")
        var ready = 0
        while Date() < deadline, ready < 2 {
            ready = try status(api + "/readyz", from: "127.0.0.3", caFile: balancer.caFile) == 200 ? ready + 1 : 0
        }
        #expect(ready == 2, "\(balancer.log)")

        // 127.0.0.2 guesses device tokens until both instances refuse it (20 failures each, round robin).
        var guesses: [Int] = []
        while guesses.count < 80, guesses.suffix(2) != [429, 429] {
            guesses.append(try status(api + "/v1/redemptions", from: "127.0.0.2", token: "ld_guess\(guesses.count)", caFile: balancer.caFile))
        }
        #expect(guesses.suffix(2) == [429, 429] && Set(guesses) == [401, 429], "\(guesses)")
        #expect(guesses.count >= 40, "locked out after \(guesses.count) guesses: the instances shared a bucket")

        // 127.0.0.3, through the same balancer, still has its own buckets on both instances.
        for _ in 0..<2 {
            #expect(try status(api + "/v1/redemptions", from: "127.0.0.3", token: "ld_mistyped", caFile: balancer.caFile) == 401)
        }
        #expect(try status(api + "/v1/redemptions", from: "127.0.0.2", token: "ld_more", caFile: balancer.caFile) == 429)

        for server in [first, second] {
            let lines = requests(in: server.log)
            #expect(lines.contains { $0 == ("127.0.0.2", 401) } && lines.contains { $0 == ("127.0.0.2", 429) })
            #expect(lines.contains { $0 == ("127.0.0.3", 401) }, "\(lines)")
        }

        // A client going around the balancer is refused: it is not the trusted proxy, whose header it could forge.
        #expect(try status(first.url + "/healthz", from: "127.0.0.2") == 0)
        #expect(
            first.log.contains(
                "closed a connection from 127.0.0.2: it is not a trusted proxy, and only those may send the PROXY header"),
            "\(first.log)")
    }

    /// X-Forwarded-For from the --trusted-proxy names the client (its rate limits and log lines); the same header
    /// from anyone else is ignored, with a log line saying so.
    @Test func forwardedForCountsOnlyFromTheTrustedProxy() throws {
        let databaseURL = try EmbeddedPostgres.shared().createDatabase(
            "forwarded_\(UUID().uuidString.prefix(8).lowercased())")
        let server = try LoyaltyServerProcess(
            databaseURL: databaseURL, environment: ["LOYALTY_TRUSTED_PROXIES": "127.0.0.4/32"])
        defer { server.stop() }
        let url = server.url + "/v1/redemptions"
        var guesses: [Int] = []
        while guesses.count < 40, guesses.last != 429 {
            guesses.append(
                try status(
                    url, from: "127.0.0.4", token: "ld_guess", headers: ["X-Forwarded-For: 10.1.1.1, 203.0.113.9"]))
        }
        #expect(guesses.last == 429 && guesses.count == 21, "\(guesses)")
        // Another client behind the same proxy is not locked out, and neither is the proxy's own address.
        #expect(
            try status(url, from: "127.0.0.4", token: "ld_guess", headers: ["X-Forwarded-For: 203.0.113.10"]) == 401)
        #expect(try status(url, from: "127.0.0.4", token: "ld_guess") == 401)
        // Not the proxy: its X-Forwarded-For names no one, so it cannot dodge its own lock-out by naming others.
        for index in 0..<21 {
            _ = try status(url, from: "127.0.0.5", token: "ld_guess", headers: ["X-Forwarded-For: 198.51.100.\(index)"])
        }
        #expect(try status(url, from: "127.0.0.5", token: "ld_guess", headers: ["X-Forwarded-For: 198.51.100.99"]) == 429)

        let lines = requests(in: server.log)
        #expect(lines.contains { $0 == ("203.0.113.9", 429) } && lines.contains { $0 == ("203.0.113.10", 401) })
        #expect(lines.contains { $0 == ("127.0.0.4", 401) } && lines.contains { $0 == ("127.0.0.5", 429) })
        #expect(!lines.contains { $0.client.hasPrefix("198.51.100.") || $0.client == "10.1.1.1" }, "\(lines)")
        #expect(
            server.log.contains(
                "ignored X-Forwarded-For from 127.0.0.5, which is not a trusted proxy: its requests count as its own"),
            "\(server.log)")
    }
}
