import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// A console sign-in as the browser makes it: the session cookie and the CSRF token.
struct ConsoleLogin {
    var cookie: String
    var csrf: String
    var setCookie: String

    init(_ server: TestServer, apiKey: String) throws {
        let reply = try server.request("POST", "/v1/console/session", json: ConsoleSignIn(apiKey: apiKey))
        try #require(reply.status == 201, "\(reply.text)")
        setCookie = try #require(reply.headers["set-cookie"])
        cookie = String(setCookie.split(separator: ";")[0])
        csrf = try reply.decode(ConsoleSession.self).csrfToken
    }

    func headers(csrf: String? = nil) -> [String: String] {
        var headers = ["Cookie": cookie]
        if let csrf { headers["X-CSRF-Token"] = csrf }
        return headers
    }
}

@Suite struct ConsoleSessionTests {
    @Test func theCookieIsHttpOnlyStrictAndReadsOnlyItsRetailer() throws {
        let server = try TestServer(.socket)
        let matey = try server.registerRetailer()
        let tucci = try server.registerRetailer("Tucci's")
        try server.putOffer(tucci, major: 1, minor: 1, OfferDraft(title: "Tucci's pizza"))
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        #expect(login.setCookie.contains("HttpOnly") && login.setCookie.contains("SameSite=Strict"))
        #expect(login.setCookie.contains("Max-Age=28800") && login.setCookie.contains("Path=/"))
        #expect(!login.setCookie.contains(matey.apiKey) && !login.cookie.contains("lk_"))
        let stored = try server.pool.withConnection { try $0.query("SELECT token_hash FROM console_sessions").count }
        #expect(stored == 1)

        let shown: Retailer = try server.request("GET", "/v1/retailer", headers: login.headers()).decode()
        #expect(shown.id == matey.id)
        let offers: OfferList = try server.request("GET", "/v1/retailer/offers", headers: login.headers()).decode()
        #expect(offers.offers.isEmpty, "Tucci's offer is not Matey's")
        let session: ConsoleSession = try server.request("GET", "/v1/console/session", headers: login.headers())
            .decode()
        #expect(session.csrfToken == login.csrf && session.retailer.id == matey.id)

        let wrongKey = try server.request("POST", "/v1/console/session", json: ConsoleSignIn(apiKey: "lk_nope"))
        #expect(wrongKey.status == 401 && wrongKey.headers["set-cookie"] == nil)
        let formPost = try server.raw(
            "POST", "/v1/console/session", headerLines: ["Content-Type: text/plain"],
            body: Array("{\"api_key\":\"\(matey.apiKey)\"}".utf8))
        #expect(formPost.status == 415)
    }

    /// A write with the cookie needs the session's CSRF token: none, a forged one and another session's are 403
    /// and change nothing.
    @Test func aWriteWithoutTheRightCSRFTokenIsRefused() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        let other = try ConsoleLogin(server, apiKey: matey.apiKey)
        let draft = OfferDraft(title: "Sushi")
        // One character changed (the last of a 32-byte digest in base64url carries 4 bits: "A" and "E" both fit).
        let tampered = String(login.csrf.dropLast()) + (login.csrf.hasSuffix("A") ? "E" : "A")
        for csrf in [nil, "forged", tampered, other.csrf] {
            let reply = try server.request(
                "PUT", "/v1/retailer/offers/1/1", json: draft, headers: login.headers(csrf: csrf))
            #expect(reply.status == 403 && reply.errorField == "X-CSRF-Token", "\(String(describing: csrf)): \(reply.text)")
        }
        #expect(try server.offers(matey).isEmpty)
        let signOut = try server.request("DELETE", "/v1/console/session", headers: login.headers(csrf: "forged"))
        #expect(signOut.status == 403)
        let created = try server.request(
            "PUT", "/v1/retailer/offers/1/1", json: draft, headers: login.headers(csrf: login.csrf))
        #expect(created.status == 201)
    }

    /// After sign-out the same cookie is refused everywhere, and its row is gone.
    @Test func aCookieReplayedAfterSignOutIsRefused() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        let out = try server.request("DELETE", "/v1/console/session", headers: login.headers(csrf: login.csrf))
        #expect(out.status == 204)
        #expect(out.headers["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(try server.request("GET", "/v1/retailer", headers: login.headers()).status == 401)
        #expect(try server.request("GET", "/v1/console/session", headers: login.headers()).status == 204)
        let write = try server.request(
            "PUT", "/v1/retailer/offers/1/1", json: OfferDraft(title: "x"), headers: login.headers(csrf: login.csrf))
        #expect(write.status == 401)
        let rows = try server.pool.withConnection { try $0.query("SELECT 1 FROM console_sessions").count }
        #expect(rows == 0)
    }

    @Test func sessionsExpireAndEndWhenTheKeyIsRotatedElsewhere() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        server.clock.advance(by: consoleSessionLifetime + 1)
        #expect(try server.request("GET", "/v1/retailer", headers: login.headers()).status == 401)

        let first = try ConsoleLogin(server, apiKey: matey.apiKey)
        let second = try ConsoleLogin(server, apiKey: matey.apiKey)
        let rotated = try server.request("POST", "/v1/retailer/key", headers: second.headers(csrf: second.csrf))
        #expect(rotated.status == 200)
        #expect(try server.request("GET", "/v1/retailer", headers: first.headers()).status == 401)
        #expect(try server.request("GET", "/v1/retailer", headers: second.headers()).status == 200)
        let newKey: APIKey = try rotated.decode()
        _ = try server.request("POST", "/v1/retailer/key", token: newKey.apiKey)
        #expect(try server.request("GET", "/v1/retailer", headers: second.headers()).status == 401)
    }

    /// The console's files: a policy without inline scripts, and markup with no inline script or handler.
    @Test func theConsoleIsServedWithAStrictPolicyAndNoInlineScript() throws {
        let server = try TestServer()
        for path in ["/console/", "/console", "/console/index.html"] {
            let page = try server.request("GET", path)
            #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/html") == true, "\(path)")
            let policy = try #require(page.headers["content-security-policy"])
            #expect(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(page.headers["x-content-type-options"] == "nosniff")
            let html = page.text
            #expect(html.contains("<script src=\"/console/console.js\""))
            #expect(html.components(separatedBy: "<script").count == 2, "one script element, with src")
            #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "no inline handlers")
            #expect(!html.contains("http://") && !html.contains("https://"), "nothing from another origin")
        }
        let script = try server.request("GET", "/console/console.js")
        #expect(script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        #expect(!script.text.contains("innerHTML") && !script.text.contains("localStorage"))
        #expect(!script.text.contains("eval(") && !script.text.contains("document.write"))
        #expect(try server.request("GET", "/console/console.css").status == 200)
        #expect(try server.request("GET", "/console/secrets.txt").status == 404)
        #expect(try server.request("GET", "/console/..%2Fschema.sql").status == 404)
    }

    /// The console's session holds no key, so a rotation there replaces the current key: the CLI's saved copy of it
    /// keeps working until the new key is first used, as after `retailer rotate-key`.
    @Test func aRotationFromTheConsoleKeepsTheCLIsKeyForItsGracePeriod() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        let rotated = try server.request("POST", "/v1/retailer/key", headers: login.headers(csrf: login.csrf))
        let newKey: APIKey = try rotated.decode()
        #expect(try server.request("GET", "/v1/retailer", token: matey.apiKey).status == 200)
        #expect(try server.request("GET", "/v1/retailer", token: newKey.apiKey).status == 200)
        #expect(try server.request("GET", "/v1/retailer", token: matey.apiKey).status == 401)
    }

    /// Signed out, the page's probe is an ordinary answer, and the icon it links is there: no error in the log.
    @Test func aSignedOutPageLoadAsksNothingThatFails() throws {
        let server = try TestServer()
        let probe = try server.request("GET", "/v1/console/session")
        #expect(probe.status == 204 && probe.headers["cache-control"] == "no-store")
        let icon = try server.request("GET", "/console/favicon.svg")
        #expect(icon.status == 200 && icon.headers["content-type"] == "image/svg+xml")
        #expect(try server.request("GET", "/console/").text.contains("href=\"/console/favicon.svg\""))
    }
}
