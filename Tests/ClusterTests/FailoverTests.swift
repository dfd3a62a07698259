import Foundation
import HTTPClient
import HTTPServer
import LoyaltyTesting
import Synchronization
import Testing

/// The real server on a real primary and its streaming standby (DATABASE_URL naming both, read-write; the
/// standby as DATABASE_REPLICA_URL), through a failover: the primary stopped, then the standby promoted.
@Suite(.serialized) struct FailoverTests {
    let loyalty = Binary("loyalty")
    let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    /// While no primary is elected, reads are answered by the standby and writes get 503 with Retry-After
    /// (never a 500); a till's accept sent in that window retries with its Idempotency-Key until the promoted
    /// standby takes it, once: a second accept of the code is refused as used.
    @Test func aFailoverAnswers503ThenWritesResumeAndReadsNeverStop() throws {
        let pair = try StreamingStandby()
        defer { pair.remove() }
        let (_, standbyDatabase) = try pair.createDatabase("loyalty")
        let server = try LoyaltyServerProcess(
            databaseURL: try pair.bothMembers(database: "loyalty"),
            environment: ["DATABASE_REPLICA_URL": standbyDatabase])
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 1)
        #expect(
            try loyalty.run(["scan", "--replay", try server.walk(uuid: uuid, minors: [1])], environment: phone).status
                == 0)
        let redeemed = try loyalty.run(["redeem", "\(uuid):1:1", "--json"], environment: phone)
        let code = try #require(redeemed.jsonLines.first?["code"] as? String, "\(redeemed.stderr)")
        let created = try loyalty.run(
            ["retailer", "till-key", "create", "--name", "Front", "--json"], environment: server.retailer)
        let tillKey = try #require(created.jsonLines.first?["till_key"] as? String, "\(created.stderr)")
        let till = server.retailer.merging(["LOYALTY_TILL_KEY": tillKey]) { $1 }
        try pair.waitForReplay()

        pair.primary.stop()
        let readiness = try HTTPClient().send(HTTPClientRequest(url: server.url + "/readyz"))
        #expect(readiness.status == 200 && String(decoding: readiness.body, as: UTF8.self).contains("reads_only"))
        let sync = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(sync.status == 0, "the standby answers the catalog and the seen set: \(sync.stderr)")
        for _ in 1...3 {
            let write = try HTTPClient().send(
                HTTPClientRequest(
                    method: "POST", url: server.url + "/v1/accounts", headers: ["Content-Type": "application/json"],
                    body: Array("{}".utf8)))
            #expect(write.status == 503 && write.headers["retry-after"] == "2", "\(write.status)")
        }

        let accepting = Background { try? self.loyalty.run(["till", "accept", code, "--json"], environment: till) }
        Thread.sleep(forTimeInterval: 3)  // the accept's first tries meet no primary
        try pair.promoteStandby()
        let promoted = Date()
        let accepted = try #require(accepting.wait() ?? nil)
        #expect(accepted.status == 0, "\(accepted.stdout) \(accepted.stderr)")
        #expect(accepted.jsonLines.first?["event"] as? String == "code_accepted")
        #expect(Date().timeIntervalSince(promoted) < 10, "writes resume within a retry or two of the promotion")

        let again = try loyalty.run(["till", "accept", code], environment: till)
        #expect(again.status == 1 && again.stderr.contains("used"), "\(again.stdout) \(again.stderr)")
        let after = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(after.status == 0, "\(after.stderr)")
    }

    /// The standby promoted while the primary is unreachable (the balancer not yet routing to the new one): the
    /// server's connections to the standby saw it in recovery, so it is our standby promoted, and they go on
    /// answering reads rather than sending them to a primary that cannot answer (503).
    @Test func readsGoOnThroughAStandbyThatWasPromoted() throws {
        let pair = try StreamingStandby()
        defer { pair.remove() }
        let (primaryDatabase, standbyDatabase) = try pair.createDatabase("loyalty")
        let server = try LoyaltyServerProcess(
            databaseURL: primaryDatabase, environment: ["DATABASE_REPLICA_URL": standbyDatabase])
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 1)
        try pair.waitForReplay()
        #expect(try loyalty.run(["sync", "--full", "--json"], environment: phone).status == 0)

        pair.primary.stop()
        try pair.promoteStandby()
        Thread.sleep(forTimeInterval: 1.2)  // past the connection's last standing check
        let sync = try loyalty.run(["sync", "--full", "--json"], environment: phone)
        #expect(sync.status == 0, "the promoted standby answers: \(sync.stderr)")
        #expect(!server.log.contains(#""reason":"not_standby""#), "\(server.log)")
    }
}

/// A till's accept whose answer is lost after the server committed it: `loyalty till accept` sends it again with
/// the same Idempotency-Key and gets the first answer, so the cashier sees "accepted", not "already used".
@Suite struct LostAnswerTests {
    let loyalty = Binary("loyalty")
    let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    @Test func aTillAcceptWhoseAnswerWasLostIsRetriedWithItsKeyAndAcceptedOnce() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 1)
        #expect(
            try loyalty.run(["scan", "--replay", try server.walk(uuid: uuid, minors: [1])], environment: phone).status
                == 0)
        let code = try #require(
            try loyalty.run(["redeem", "\(uuid):1:1", "--json"], environment: phone).jsonLines.first?["code"] as? String)
        let created = try loyalty.run(
            ["retailer", "till-key", "create", "--name", "Front", "--json"], environment: server.retailer)
        let tillKey = try #require(created.jsonLines.first?["till_key"] as? String, "\(created.stderr)")
        let proxy = try AnswerLosingProxy(upstream: server.url)
        defer { proxy.shutdown() }

        let accepted = try loyalty.run(
            ["till", "accept", code, "--json"],
            environment: server.retailer.merging(["LOYALTY_SERVER": proxy.url, "LOYALTY_TILL_KEY": tillKey]) { $1 })
        #expect(accepted.status == 0, "\(accepted.stdout) \(accepted.stderr)")
        #expect(accepted.jsonLines.first?["accepted_till"] as? String == "Front")
        let keys = proxy.acceptKeys
        #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1], "\(keys)")
        #expect(proxy.upstreamStatuses == [200, 200], "the first accept was committed, its answer dropped")
    }
}

/// A loopback proxy to a loyalty server that passes every request on, but answers the first till accept 503 after
/// the server has answered it: an answer lost on the way back, as when the database's COMMIT reply is lost in a
/// failover. It records each accept's Idempotency-Key and the server's statuses.
final class AnswerLosingProxy: Sendable {
    let url: String
    private let server: HTTPServer
    private let accepts = AcceptLog()

    private final class AcceptLog: Sendable {
        let entries = Mutex<[(key: String?, status: Int)]>([])
    }

    init(upstream: String) throws {
        let accepts = accepts
        server = try HTTPServer(
            host: "127.0.0.1", port: 0, reject: { _ in HTTPResponse(status: 400) },
            handler: { request in
                let passed = ["authorization", "content-type", "idempotency-key"]
                let answer: HTTPClientResponse
                do throws(HTTPClientError) {
                    answer = try HTTPClient().send(
                        HTTPClientRequest(
                            method: request.method, url: upstream + request.path,
                            headers: request.headers.filter { passed.contains($0.key.lowercased()) },
                            body: request.body.isEmpty ? nil : request.body))
                } catch {
                    return HTTPResponse(status: 502, body: Array(error.description.utf8))
                }
                if request.path == "/v1/till/accept" {
                    let first = accepts.entries.withLock { seen in
                        seen.append((request.header("idempotency-key"), answer.status))
                        return seen.count == 1
                    }
                    if first {
                        return HTTPResponse(
                            status: 503, headers: ["Content-Type": "application/json", "Retry-After": "2"],
                            body: Array(#"{"error":{"code":"database_unavailable","message":"lost by the test"}}"#.utf8))
                    }
                }
                return HTTPResponse(
                    status: answer.status, headers: answer.headers.filter { $0.key != "content-length" },
                    body: answer.body)
            })
        url = "http://127.0.0.1:\(server.port)"
    }

    var acceptKeys: [String?] { accepts.entries.withLock { $0.map(\.key) } }
    var upstreamStatuses: [Int] { accepts.entries.withLock { $0.map(\.status) } }

    func shutdown() { server.shutdown(gracePeriod: .zero) }
}

/// Runs `body` on a thread of its own; `wait` returns its result.
private final class Background<T>: @unchecked Sendable {  // `result` is written before `done` is signalled
    private var result: T?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> T) {
        Thread {
            self.result = body()
            self.done.signal()
        }.start()
    }

    func wait() -> T? {
        done.wait()
        return result
    }
}
