import Foundation
import LoyaltyTesting
import Synchronization
import Testing

/// The catalog check in memory (`CatalogCheck`, docs/SCALING.md) through a failover of the Patroni cluster: two
/// instances whose pools and listening connections reach the primary through HAProxy's primary port, phones checking
/// the catalog with their ETag on both, the primary SIGKILLed. Each listener must find the new primary and reload
/// before it answers from memory again, and then hear the new primary's notifications: a catalog write through one
/// instance ends the other's 304s for the old ETag within a bound. make check only (LOYALTY_CLUSTER_CHECK=full);
/// prints a `cluster catalog-check` line, which check.sh puts in its table.
@Suite(.serialized) struct CatalogCheckFailoverTests {
    /// How soon after the write is acknowledged the other instance stops answering the old ETag 304: a notification
    /// takes milliseconds (docs/SCALING.md); the rest is room for this shared machine. The instance that took the
    /// write catches up before it answers, so it gets no room at all.
    static let notificationBound = 1.0

    /// One catalog check a phone sent: to which instance, when, and its answer (0: none).
    struct Check {
        var instance: Int
        var sent: Date
        var answered: Date
        var status: Int
        var etag: String?
    }

    /// An instance's catalog check as its /metrics said at `time`.
    struct Sample {
        var instance: Int
        var time: Date
        var listening: Bool
        var tokens: Int
        var fromMemory: Int
    }

    @Test(.enabled(if: ClusterFailoverTests.full))
    func listenersFollowTheNewPrimaryAndNoStale304FollowsAWrite() throws {
        let cluster = try PatroniCluster()
        defer { cluster.stop() }
        _ = try cluster.createDatabase("loyalty")
        // DATABASE_NOTIFY_URL left unset is DATABASE_URL: HAProxy's primary port reaches the primary itself.
        let databaseURL = cluster.haproxyConninfo(database: "loyalty")
        let adminToken = "catalog-failover-\(UUID().uuidString)"
        var servers: [LoyaltyServerProcess] = []
        defer { servers.forEach { $0.stop() } }
        for _ in 0..<2 { servers.append(try LoyaltyServerProcess(databaseURL: databaseURL, adminToken: adminToken)) }
        let instances = servers.map(\.url)

        let retailer = try call(instances[0], "POST", "/v1/retailers", token: adminToken, json: ["name": "Matey's"])
        let apiKey = try #require(retailer.object["api_key"] as? String, "\(retailer.text)")
        let first = try call(instances[0], "PUT", "/v1/retailer/offers/1/1", token: apiKey, json: ["title": "Sushi"])
        #expect(first.status == 200 || first.status == 201, "\(first.text)")
        let phones = try (0..<6).map { index in
            try #require(
                try call(instances[index % 2], "POST", "/v1/accounts", json: [:]).object["device_token"] as? String)
        }
        let oldTag = try #require(try call(instances[1], "GET", "/v1/catalog", token: phones[0]).headers["etag"])

        let samples = Mutex<[Sample]>([])
        let checks = Mutex<[Check]>([])
        let stopping = Atomic<Bool>(false)
        let group = DispatchGroup()
        func background(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread {
                body()
                group.leave()
            }.start()
        }
        // Both instances' catalog check every 50 ms.
        background {
            while !stopping.load(ordering: .relaxed) {
                for instance in 0..<2 {
                    if let sample = try? Self.sample(instances[instance], instance: instance, adminToken: adminToken) {
                        samples.withLock { $0.append(sample) }
                    }
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        // Each phone checks the catalog with the ETag it held before the write, on each instance in turn.
        for (index, phone) in phones.enumerated() {
            background {
                var instance = index % 2
                while !stopping.load(ordering: .relaxed) {
                    let sent = Date()
                    let reply = try? call(
                        instances[instance], "GET", "/v1/catalog", token: phone, headers: ["If-None-Match": oldTag],
                        totalTimeout: 10)
                    checks.withLock {
                        $0.append(
                            Check(
                                instance: instance, sent: sent, answered: Date(), status: reply?.status ?? 0,
                                etag: reply?.headers["etag"]))
                    }
                    instance = 1 - instance
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
        defer {
            stopping.store(true, ordering: .relaxed)
            group.wait()
        }

        // Listening on the first primary, answering from memory.
        try waitUntil(within: 30, "both instances listening and holding tokens") {
            let states = samples.withLock { $0 }
            return (0..<2).allSatisfy { instance in
                states.contains { $0.instance == instance && $0.listening && $0.tokens > 0 }
            }
        }
        Thread.sleep(forTimeInterval: 2)
        let leader = try #require(cluster.leader())
        let killed = Date()
        cluster.signal(leader, SIGKILL)
        try cluster.waitForLeader(other: leader)
        let promoted = Date()
        // Each listener back on the new primary: its log says when (`catalog_check_listening` follows a failure only).
        try waitUntil(within: 60, "both listeners back") { servers.allSatisfy { Self.listeningAgain($0.log) != nil } }
        let back = servers.map { Self.listeningAgain($0.log) ?? .distantFuture }
        // Then answering from memory again, before any write: the head was read on the new primary.
        try waitUntil(within: 10, "both instances answer from memory after the failover") {
            let states = samples.withLock { $0 }
            return (0..<2).allSatisfy { instance in
                let after = states.filter { $0.instance == instance && $0.time > back[instance] && $0.listening }
                return (after.last?.fromMemory ?? 0) > (after.first?.fromMemory ?? 0)
            }
        }

        // A catalog write on the new primary through the first instance, retried until acknowledged.
        var acknowledged: Date?
        let writeDeadline = Date().addingTimeInterval(30)
        while acknowledged == nil, Date() < writeDeadline {
            let reply = try? call(
                instances[0], "PUT", "/v1/retailer/offers/1/2", token: apiKey, json: ["title": "Pizza"])
            if let reply, reply.status == 200 || reply.status == 201 {
                acknowledged = Date()
            } else {
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        let written = try #require(acknowledged, "the write was not acknowledged within 30 s")
        Thread.sleep(forTimeInterval: Self.notificationBound + 2)
        stopping.store(true, ordering: .relaxed)
        group.wait()

        let history = checks.withLock { $0 }
        let states = samples.withLock { $0 }
        #expect(
            history.contains { $0.sent < killed && $0.status == 304 },
            "the phones were answered 304 before the kill: \(Self.statuses(history))")
        // While not listening, no token is held: a reconnect forgets them all before the head is read again.
        let vouchingBlind = states.filter { !$0.listening && $0.tokens > 0 }
        #expect(vouchingBlind.isEmpty, "\(vouchingBlind)")
        for instance in 0..<2 {
            #expect(
                states.contains {
                    $0.instance == instance && $0.time > killed && $0.time < back[instance] && !$0.listening
                },
                "instance \(instance) stopped vouching when the primary went")
        }
        // No 304 for the old ETag after the write: at once on the instance that took it, within the bound on the
        // other (which hears of it by the new primary's notification).
        let stale = history.filter {
            $0.status == 304
                && $0.sent > written.addingTimeInterval($0.instance == 0 ? 0 : Self.notificationBound)
        }
        #expect(stale.isEmpty, "\(stale.count) stale 304s after the write, the first: \(stale.prefix(3))")
        let seen = history.filter { $0.instance == 1 && $0.sent > written && $0.status == 200 }
            .min { $0.answered < $1.answered }
        let newTag = try #require(seen?.etag, "the other instance never answered 200: \(Self.statuses(history))")
        #expect(newTag != oldTag)
        for instance in instances {
            #expect(
                try call(instance, "GET", "/v1/catalog", token: phones[0], headers: ["If-None-Match": newTag]).status
                    == 304)
        }
        let lastStale = history.filter { $0.instance == 1 && $0.status == 304 && $0.sent > written }
            .map(\.answered).max()
        let promotedAfter = promoted.timeIntervalSince(killed)
        let milliseconds = { (date: Date) in String(format: "%.0f ms", date.timeIntervalSince(written) * 1000) }
        print(
            "cluster catalog-check listeners back "
                + back.map { String(format: "%.2f", $0.timeIntervalSince(promoted)) }.joined(separator: " and ")
                + String(format: " s after the promotion (promoted %.1f s after the kill), ", promotedAfter)
                + "write to 200 on the other instance \(seen.map { milliseconds($0.answered) } ?? "never"), "
                + "last 304 for the old ETag there \(lastStale.map(milliseconds) ?? "none") after the write, "
                + "\(history.count) checks, \(history.filter { $0.status == 304 }.count) 304s, \(stale.count) stale: "
                + "acknowledged write at \(written)")
    }

    /// When the log last said the catalog check listens again (after a failure), from its `time` field.
    private static func listeningAgain(_ log: String) -> Date? {
        // `2026-12-06T10:31:22.250Z`, without the fraction on a whole second.
        let (parser, whole) = (ISO8601DateFormatter(), ISO8601DateFormatter())
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return log.split(separator: "\n").filter { $0.contains(#""event":"catalog_check_listening""#) }.compactMap {
            line -> Date? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let time = object["time"] as? String
            else { return nil }
            return parser.date(from: time) ?? whole.date(from: time)
        }.last
    }

    private static func sample(_ instance: String, instance index: Int, adminToken: String) throws -> Sample {
        let metrics = try call(instance, "GET", "/metrics", token: adminToken, totalTimeout: 5).text
        func value(_ name: String) -> Int? {
            metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                Int($0.dropFirst(name.count + 1))
            }
        }
        guard let listening = value("loyalty_catalog_check_listening"),
            let tokens = value("loyalty_catalog_check_device_tokens"),
            let fromMemory = value("loyalty_catalog_check_from_memory_total")
        else { throw WorkloadFailure("no catalog check in /metrics: \(metrics)") }
        return Sample(instance: index, time: Date(), listening: listening == 1, tokens: tokens, fromMemory: fromMemory)
    }

    private static func statuses(_ history: [Check]) -> [Int: Int] {
        history.reduce(into: [:]) { $0[$1.status, default: 0] += 1 }
    }

    private func waitUntil(within seconds: Double, _ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw WorkloadFailure("\(what): not within \(Int(seconds)) s") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
