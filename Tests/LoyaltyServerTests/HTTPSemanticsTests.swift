import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// What an HTTP lint (REDbot, HTTPolice) checks of the answers as they go over the wire (RFC 9110, 9111, 6750):
/// over a plain socket, so the bytes are libmicrohttpd's.
@Suite struct HTTPSemanticsTests {
    /// The catalog's 304 is empty: libmicrohttpd announces a length in every 304, and with the 200's (as RFC 9110
    /// section 8.6 would have it) clients built on http_parser, wrk's among them, wait for a body that never comes.
    /// A tag shared by answers whose bytes differ (`server_time`) is weak.
    @Test func aCatalog304IsEmptyAndTheTagIsWeak() throws {
        let server = try TestServer(.socket)
        let retailer = try server.registerRetailer()
        try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "30% off sushi"))
        let device = try server.createAccount()
        for query in ["", "near=51.5152,-0.1418&radius_km=1&"] {
            let full = try server.raw("GET", "/v1/catalog?\(query)", token: device.deviceToken)
            #expect(full.status == 200)
            let tag = try #require(full.headers["etag"])
            #expect(tag.hasPrefix("W/\""), "\(tag)")
            let cursor = try full.decode(CatalogPage.self).cursor
            let target = "/v1/catalog?\(query)since=\(cursor)"
            server.clock.advance(by: 1.5)  // a 200 now would differ in server_time, with a fraction
            let fresh = try server.raw("GET", target, token: device.deviceToken)
            #expect(fresh.status == 200 && fresh.headers["etag"] == tag)
            let unchanged = try server.raw("GET", target, token: device.deviceToken, headerLines: ["If-None-Match: \(tag)"])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty)
            #expect(unchanged.headers["etag"] == tag)
            // libmicrohttpd writes the empty body's length; the 200's would have clients that read one wait for it.
            #expect(unchanged.headers["content-length"] == "0", "\(query): \(unchanged.headers)")
        }
    }

    /// HEAD is answered as GET is, without the body: the same Content-Length, on an unknown route too.
    @Test func headAnnouncesTheLengthGetSends() throws {
        let server = try TestServer(.socket)
        for path in ["/v1/nowhere", "/healthz", "/v1/accounts"] {
            let get = try server.raw("GET", path)
            let head = try server.raw("HEAD", path)
            #expect(head.status == get.status && head.body.isEmpty)
            #expect(head.headers["content-length"] == String(get.body.count), "\(path): \(head.headers) \(get.text)")
        }
    }

    /// RFC 6750 section 3 (and RFC 9110 section 15.5.2: every 401 challenges): a realm, and `invalid_token` when
    /// the token that came is no good.
    @Test func a401ChallengesWithARealmAndSaysWhenTheTokenIsInvalid() throws {
        let server = try TestServer(.socket)
        let none = try server.raw("GET", "/v1/retailer")
        #expect(none.status == 401 && none.headers["www-authenticate"] == #"Bearer realm="loyalty""#)
        let forged = try server.raw("GET", "/v1/catalog", token: "ld_forged")
        #expect(forged.status == 401)
        #expect(forged.headers["www-authenticate"] == #"Bearer realm="loyalty", error="invalid_token""#)
        let signIn = try server.raw("POST", "/v1/console/session", body: Array(#"{"api_key":"lk_nothing"}"#.utf8))
        #expect(signIn.status == 401 && signIn.headers["www-authenticate"] == #"Bearer realm="loyalty""#)
    }

    /// The console's files stay `no-cache` (a new binary's show at once) with a validator: a browser asking with
    /// the ETag it has is told 304, announcing the file's length, instead of downloading it again.
    @Test func theConsolesFilesRevalidateByTheirETag() throws {
        let server = try TestServer(.socket)
        for path in ["/console/", "/console/console.js", "/console/console.css", "/console/favicon.svg"] {
            let file = try server.raw("GET", path)
            #expect(file.status == 200 && file.headers["cache-control"] == "no-cache")
            let tag = try #require(file.headers["etag"], "\(path)")
            #expect(tag.hasPrefix("\""))
            let again = try server.raw("GET", path, headerLines: ["If-None-Match: \(tag)"])
            #expect(again.status == 304 && again.body.isEmpty && again.headers["etag"] == tag, "\(path)")
            #expect(again.headers["content-length"] == String(file.body.count))
            #expect(again.headers["cache-control"] == "no-cache")
            #expect(try server.raw("GET", path, headerLines: [#"If-None-Match: "other""#]).status == 200)
        }
    }
}
