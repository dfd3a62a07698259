import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// A body is read only for a request that may send it (issue 23, item 2): without a credential, or for an import
/// with one that does not let it in, the answer comes from the head, and not a byte of the body is waited for.
@Suite struct EarlyRefusalTests {
    /// The head alone announces 30 MB; the answer comes without them.
    private func announcingImport(_ server: TestServer, token: String?) throws -> TestResponse {
        try server.raw(
            "POST", "/v1/retailer/offers/import", token: token,
            headerLines: ["Content-Type: text/csv", "Content-Length: 30000000"])
    }

    @Test func anImportWithoutAValidRetailerKeyIsRefusedFromItsHead() throws {
        let server = try TestServer(.socket)
        let shopper = try server.createAccount()
        #expect(try announcingImport(server, token: nil).status == 401)
        #expect(try announcingImport(server, token: Secrets.token(prefix: "lk_")).status == 401)
        #expect(try announcingImport(server, token: shopper.deviceToken).status == 403)
    }

    @Test func aCredentialedRouteAskedWithoutACredentialIsRefusedFromItsHead() throws {
        let server = try TestServer(.socket)
        let refused = try server.raw(
            "PUT", "/v1/retailer/offers/1/1", headerLines: ["Content-Type: application/json", "Content-Length: 60000"])
        #expect(refused.status == 401)
        #expect(try refused.decode(APIErrorBody.self).error.code == .unauthorized)
    }

    /// About 1,500 query parameters once ran libmicrohttpd out of the connection's memory: no answer, and the
    /// connection held (issue 23, item 15).
    @Test func tooManyQueryParametersAreAnswered414() throws {
        let server = try TestServer(.socket)
        let query = (0..<2_000).map { "p\($0)=\($0)" }.joined(separator: "&")
        let refused = try server.raw("GET", "/v1/catalog?" + query)
        #expect(refused.status == 414)
        #expect(try refused.decode(APIErrorBody.self).error.message.contains("more than 100 query parameters"))
        #expect(try server.raw("GET", "/healthz?" + query.prefix(200)).status == 200)
    }

    /// Routes anyone may call still read their bodies.
    @Test func openRoutesStillReadTheirBodies() throws {
        let server = try TestServer(.socket)
        #expect(try server.raw("POST", "/v1/accounts", body: Array("{}".utf8)).status == 201)
    }
}
