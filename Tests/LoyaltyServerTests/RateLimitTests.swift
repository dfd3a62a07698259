import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// Guessing is slowed by token buckets, and /metrics labels come from fixed sets
/// whatever clients send.
@Suite struct RateLimitTests {
    /// The counter of `limit` in a /metrics text.
    private func refused(_ limit: RateLimit, in metrics: String) -> Int? {
        let prefix = "loyalty_rate_limited_total{limit=\"\(limit.rawValue)\"} "
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    private func expectLimited(_ reply: TestResponse, _ context: String) {
        #expect(reply.status == 429 && reply.errorCode == .rateLimited, "\(context): \(reply.status) \(reply.text)")
        #expect(Int(reply.headers["retry-after"] ?? "").map { $0 >= 1 } == true, "\(context): \(reply.headers)")
    }

    @Test func wrongLinkCodesFromOneAddressAreSlowedDown() throws {
        let server = try TestServer(rateLimits: .standard)
        let ann = try server.createAccount()
        let live: LinkCode = try server.request("POST", "/v1/link-codes", token: ann.deviceToken).decode()
        var statuses: [Int] = []
        for attempt in 0..<40 {
            let guess = String(format: "zz%02d-q9xp", attempt)
            statuses.append(try server.request("POST", "/v1/devices", json: DeviceRegistration(code: guess)).status)
        }
        #expect(statuses.prefix(10).allSatisfy { $0 == 404 }, "\(statuses)")
        #expect(statuses.dropFirst(10).allSatisfy { $0 == 429 }, "\(statuses)")
        // Once limited, the address learns nothing, not even from the right code; the code stays unspent.
        expectLimited(try server.request("POST", "/v1/devices", json: DeviceRegistration(code: live.code)), "live code")
        let metrics = try server.request("GET", "/metrics", token: server.operatorToken).text
        #expect(refused(.linkCodeAttempts, in: metrics) == 31, "\(metrics)")
        #expect(refused(.accountCreation, in: metrics) == 0)
    }

    @Test func accountCreationAndLinkCodesAreLimited() throws {
        let server = try TestServer(rateLimits: .standard)
        var created: [DeviceCredentials] = []
        var reply = try server.request("POST", "/v1/accounts")
        while reply.status == 201 && created.count < 100 {
            created.append(try reply.decode())
            reply = try server.request("POST", "/v1/accounts")
        }
        #expect((30...31).contains(created.count), "\(created.count) accounts before \(reply.text)")
        expectLimited(reply, "account 31")
        let device = try #require(created.first)
        var codes = 0
        reply = try server.request("POST", "/v1/link-codes", token: device.deviceToken)
        while reply.status == 201 && codes < 100 {
            codes += 1
            reply = try server.request("POST", "/v1/link-codes", token: device.deviceToken)
        }
        #expect(codes == 10)
        expectLimited(reply, "link code 11")
        // Per account: another account still gets its codes.
        #expect(try server.request("POST", "/v1/link-codes", token: created[1].deviceToken).status == 201)
    }

    @Test func failedAuthenticationsAreLimitedPerAddressAndPerAccount() throws {
        let server = try TestServer(rateLimits: .standard)
        let retailer = try server.registerRetailer()
        let ann = try server.createAccount()
        let ben = try server.createAccount()
        // Tokens naming Ann's account with guessed secrets.
        var statuses: [Int] = []
        for _ in 0..<11 {
            let forged = DeviceToken.issue(accountID: ann.accountID)
            statuses.append(try server.request("GET", "/v1/seen", token: forged).status)
        }
        #expect(statuses == Array(repeating: 401, count: 10) + [429], "\(statuses)")
        // Ann's account is held back; Ben's is not, and the address has failures left.
        expectLimited(try server.request("GET", "/v1/catalog", token: ann.deviceToken), "Ann's own token")
        #expect(try server.request("GET", "/v1/seen", token: ben.deviceToken).status == 200)
        // Wrong retailer keys use up the address's bucket for retailer keys: then even the right key is not tried.
        statuses = []
        for attempt in 0..<22 {
            statuses.append(try server.request("GET", "/v1/retailer", token: "lk_wrong\(attempt)").status)
        }
        #expect(statuses.prefix(20).allSatisfy { $0 == 401 } && statuses.last == 429, "\(statuses)")
        expectLimited(try server.request("GET", "/v1/retailer", token: retailer.apiKey), "the right key")
        let metrics = try server.request("GET", "/metrics", token: server.operatorToken).text
        #expect((refused(.failedAuthenticationByAccount, in: metrics) ?? 0) >= 2, "\(metrics)")
        #expect((refused(.failedAuthenticationByAddress, in: metrics) ?? 0) >= 2, "\(metrics)")
    }

    /// A shop's NAT once turned 21 bad device tokens into a 429 for every request from it, till keys included
    /// (issue 23, item 6): each kind of credential has its own bucket per address.
    @Test func oneKindsFailuresNeverLockOutAnotherKind() throws {
        let server = try TestServer(rateLimits: .standard)
        let matey = try server.registerRetailer()
        let tillKey = try server.createTillKey(matey, name: "Front till").tillKey
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        var statuses: [Int] = []
        for _ in 0..<25 {
            statuses.append(try server.request("GET", "/v1/catalog", token: DeviceToken.issue(accountID: UUID())).status)
        }
        #expect(statuses.last == 429, "\(statuses)")
        let code = TillCodeRequest(code: "AAAAAAAAAA")
        #expect(try server.request("POST", "/v1/till/check", token: tillKey, json: code).status == 404)
        #expect(try server.request("GET", "/v1/retailer", token: matey.apiKey).status == 200)
        #expect(try server.request("GET", "/v1/retailer", headers: login.headers()).status == 200)

        // Bad till keys hold back till keys only: the retailer's own key still works.
        for attempt in 0..<25 { _ = try server.request("POST", "/v1/till/check", token: "lt_wrong\(attempt)", json: code) }
        expectLimited(try server.request("POST", "/v1/till/check", token: tillKey, json: code), "the right till key")
        #expect(try server.request("GET", "/v1/retailer", token: matey.apiKey).status == 200)
    }

    /// The console's sign-in and its cookie are guessed like any credential (issue 23, item 11): 1,000 wrong keys
    /// once never met a 429.
    @Test func consoleSignInsAndCookiesGoThroughTheFailedAuthenticationLimit() throws {
        let server = try TestServer(rateLimits: .standard)
        let matey = try server.registerRetailer()
        var statuses: [Int] = []
        for attempt in 0..<25 {
            let signIn = ConsoleSignIn(apiKey: "lk_guess\(attempt)")
            statuses.append(try server.request("POST", "/v1/console/session", json: signIn).status)
        }
        #expect(statuses.prefix(20).allSatisfy { $0 == 401 } && statuses.last == 429, "\(statuses)")
        expectLimited(
            try server.request("POST", "/v1/console/session", json: ConsoleSignIn(apiKey: matey.apiKey)), "the right key")

        statuses = []
        for attempt in 0..<25 {
            let cookie = ["Cookie": "\(consoleCookieName)=\(consoleSessionPrefix)guess\(attempt)"]
            statuses.append(try server.request("GET", "/v1/retailer/offers", headers: cookie).status)
        }
        #expect(statuses.prefix(20).allSatisfy { $0 == 401 } && statuses.last == 429, "\(statuses)")
        let metrics = try server.request("GET", "/metrics", token: server.operatorToken).text
        #expect(refused(.failedAuthenticationByAddress, in: metrics) == 11, "\(metrics)")
    }

    @Test func bucketsRefillAndForgetFullClients() {
        let clock = TestClock()
        let limiter = RateLimiter(
            RateLimits(buckets: [.accountCreation: .init(burst: 2, perSecond: 0.5)]),
            now: { clock.read().timeIntervalSince1970 })
        #expect(limiter.take(.accountCreation, "10.0.0.1") == nil)
        #expect(limiter.take(.accountCreation, "10.0.0.1") == nil)
        #expect(limiter.take(.accountCreation, "10.0.0.1") == 2)
        #expect(limiter.check(.accountCreation, "10.0.0.1") == 2)
        #expect(limiter.take(.accountCreation, "10.0.0.2") == nil, "another address has its own bucket")
        // One IPv6 subscriber, one bucket: the /64.
        #expect(limiter.take(.accountCreation, "2001:db8:1:2::1") == nil)
        #expect(limiter.take(.accountCreation, "2001:db8:1:2::ffff") == nil)
        #expect(limiter.take(.accountCreation, "2001:db8:1:2:abcd::9") == 2)
        #expect(limiter.take(.accountCreation, "2001:db8:1:3::1") == nil)
        clock.advance(by: 2)
        #expect(limiter.take(.accountCreation, "10.0.0.1") == nil)
        #expect(limiter.take(.accountCreation, "10.0.0.1") == 2)
        // A limit without a bucket never refuses.
        for _ in 0..<100 { #expect(limiter.take(.linkCodeCreation, "10.0.0.1") == nil) }
    }

    @Test func inventedMethodsAddNoMetricLabels() throws {
        let server = try TestServer(.socket)
        for index in 0..<150 {
            _ = try server.raw("M\(index)THOD", "/v1/nowhere\(index)")
            _ = try server.raw("X\(index)", "/healthz")
        }
        let metrics = try server.request("GET", "/metrics", token: server.operatorToken).text
        var methods = Set<String>()
        var routes = Set<String>()
        for line in metrics.split(separator: "\n") where line.hasPrefix("loyalty_http_requests_total{") {
            let labels = line.split(separator: "\"")
            methods.insert(String(labels[3]))
            routes.insert(String(labels[1]))
        }
        #expect(methods == ["other"], "\(methods)")
        #expect(routes == ["unmatched"], "\(routes)")
        #expect(metrics.contains("method=\"other\",status=\"404\"} 150"), "\(metrics)")
        #expect(metrics.contains("method=\"other\",status=\"405\"} 150"), "\(metrics)")
    }
}
