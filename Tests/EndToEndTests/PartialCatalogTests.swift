import Foundation
import HTTPClient
import HTTPServer
import LoyaltyTesting
import Synchronization
import Testing

/// A full sync cut off between two catalog pages leaves the cache partial; until a sync completes it,
/// every command that shows the cached catalog says so, once, with what to do.
@Suite struct PartialCatalogTests {
    static let warning = "the offer catalog is incomplete: a sync stopped midway; run `loyalty sync`"

    @Test func aSyncCutBetweenPagesIsReportedUntilASyncCompletesIt() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Half synced", uuid: uuid)
        for minor in 1...3 { try store.setOffer(1, minor, "Deal \(minor)", []) }
        let shopper = try server.newAccount()
        let walk = try server.walk(["\(uuid):1:3@0=1,20=1"])

        let proxy = try CatalogCuttingProxy(upstream: server.url)
        defer { proxy.shutdown() }
        // The token goes where it came from: the proxy is that server at a new address for this one sync.
        try shopper.ok(["config", "set", "server", proxy.url, "--move-credentials"])
        // The whole catalog's pages (a working set fetches parts).
        let cut = try shopper.run(["sync", "--all"], ["LOYALTY_SERVER": proxy.url])
        #expect(cut.status != 0, "the sync through the proxy should have failed at its second page")
        try shopper.ok(["config", "set", "server", server.url, "--move-credentials"])

        // The first page holds one row of the catalog, not the last offer created: its beacon shows nothing.
        let partialOffers = try shopper.ok(["offers", "--json"]).jsonLines
        #expect(partialOffers.filter { $0["title"] != nil }.count <= 1)
        #expect(!partialOffers.contains { $0["title"] as? String == "Deal 3" })
        #expect(partialOffers.filter { $0["event"] as? String == "warning" }.count == 1)
        #expect(partialOffers.first?["code"] as? String == "catalog_partial")
        #expect(partialOffers.first?["message"] as? String == Self.warning)
        #expect(warnings(try shopper.ok(["offers"])) == 1)
        #expect(try shopper.ok(["account", "show", "--json"]).jsonLines.first?["catalog_partial"] as? Bool == true)
        #expect(warnings(try shopper.ok(["account", "show"])) == 1)
        let partialScan = try shopper.ok(["scan", "--replay", walk.path, "--json", "--offline"]).jsonLines
        #expect(partialScan.first?["event"] as? String == "warning")
        #expect(partialScan.first?["code"] as? String == "catalog_partial")
        #expect(partialScan.filter { $0["event"] as? String == "warning" }.count == 1)
        #expect(!partialScan.contains { $0["event"] as? String == "offer" })
        let missing = try shopper.run(["redeem", "\(uuid):1:3"])
        #expect(missing.status != 0 && missing.stderr.contains("the catalog is incomplete"), "\(missing.stderr)")

        try shopper.ok(["sync"])
        let offers = try shopper.ok(["offers", "--json"])
        #expect(!offers.jsonLines.contains { $0["event"] != nil })
        #expect(offers.jsonLines.contains { $0["title"] as? String == "Deal 3" })
        #expect(warnings(try shopper.ok(["offers"])) == 0)
        #expect(try shopper.ok(["account", "show", "--json"]).jsonLines.first?["catalog_partial"] as? Bool == false)
        #expect(warnings(try shopper.ok(["account", "show"])) == 0)
        let scan = try shopper.ok(["scan", "--replay", walk.path, "--json", "--offline"]).jsonLines
        #expect(!scan.contains { $0["event"] as? String == "warning" })
        #expect(scan.contains { $0["event"] as? String == "offer" })
    }

    private func warnings(_ result: Binary.Result) -> Int {
        result.stderr.components(separatedBy: "warning: \(Self.warning)").count - 1
    }
}

/// A loopback proxy to a loyalty server that passes the first catalog request asked for one-offer pages,
/// and answers every later one 503: a full sync cut off after its first page, whatever the catalog's size.
final class CatalogCuttingProxy: Sendable {
    let url: String
    private let server: HTTPServer

    init(upstream: String) throws {
        let catalogRequests = Mutex(0)
        server = try HTTPServer(
            host: "127.0.0.1", port: 0, reject: { _ in HTTPResponse(status: 400) },
            handler: { request in
                var query = request.query
                if request.path == "/v1/catalog" {
                    let first = catalogRequests.withLock { count in
                        count += 1
                        return count == 1
                    }
                    guard first else {
                        return HTTPResponse(
                            status: 503, headers: ["Content-Type": "application/json"],
                            body: Array(#"{"error":{"code":"unavailable","message":"cut off by the test"}}"#.utf8))
                    }
                    query["limit"] = "1"
                }
                var target = URLComponents(string: upstream + request.path)
                if !query.isEmpty { target?.queryItems = query.map { URLQueryItem(name: $0.key, value: $0.value) } }
                let passed = ["authorization", "content-type", "if-none-match", "idempotency-key"]
                do throws(HTTPClientError) {
                    let answer = try HTTPClient().send(
                        HTTPClientRequest(
                            method: request.method, url: target?.string ?? upstream,
                            headers: request.headers.filter { passed.contains($0.key.lowercased()) },
                            body: request.body.isEmpty ? nil : request.body))
                    return HTTPResponse(
                        status: answer.status, headers: answer.headers.filter { $0.key != "content-length" },
                        body: answer.body)
                } catch {
                    return HTTPResponse(status: 502, body: Array(error.description.utf8))
                }
            })
        url = "http://127.0.0.1:\(server.port)"
    }

    func shutdown() { server.shutdown(gracePeriod: .zero) }
}
