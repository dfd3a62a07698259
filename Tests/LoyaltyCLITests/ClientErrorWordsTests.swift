import Foundation
import LoyaltyClient
import Testing

@testable import LoyaltyCLI

/// The client's errors that carry data, in the words the CLI gives them: the command that does something
/// about each.
@Suite struct ClientErrorWordsTests {
    @Test func eachSaysWhatToRun() {
        func origin(_ text: String) -> ServerOrigin { ServerOrigin(URL(string: text)!)! }
        let account = UUID(uuidString: "5C0FFEE0-0000-4000-8000-000000000001")!
        let words: [(ClientError, String)] = [
            (.notRegistered(.account),
             "this device has no account: run `loyalty account create`, or `loyalty account link CODE` to join one"),
            (.notRegistered(.retailerKey),
             "no retailer API key: run `loyalty retailer register --name NAME` or `loyalty retailer key set`, or set LOYALTY_RETAILER_KEY"),
            (.alreadyInAccount(account, linking: false),
             "this device already belongs to account 5c0ffee0-0000-4000-8000-000000000001: see `loyalty account show`"),
            (.alreadyInAccount(account, linking: true),
             "this device already belongs to account 5c0ffee0-0000-4000-8000-000000000001; to move it, run `loyalty account link --replace CODE`"),
            (.unauthorized(.device),
             "this device was revoked, its token is unknown, or its account was deleted: run `loyalty account link` on a device that is still signed in, then `loyalty account link --replace CODE` here (after a deletion, `loyalty account create` starts afresh)"),
            (.unauthorized(.retailer),
             "the retailer API key was refused (rotated or revoked?): put the current key in the config, or register again with `loyalty retailer register`"),
            (.unauthorized(.till),
             "the till key was refused (revoked?): ask the retailer for a new one (`loyalty retailer till-key create`)"),
            (.corruptCache(path: "/c.sqlite", newerSchema: 9),
             "the cache /c.sqlite was written by a newer loyalty (schema 9): upgrade, or run `loyalty sync --full` to rebuild it"),
            (.corruptCache(path: "/c.sqlite", newerSchema: nil),
             "the cache /c.sqlite is damaged: run `loyalty sync --full` to rebuild it from the server"),
            (.notFound(.notAnOffer("sushi")),
             "'sushi' is not an offer: give an offer id or UUID:MAJOR:MINOR (see `loyalty offers`)"),
            (.notFound(.notCached(catalogPartial: true)),
             "no such offer in the cache (the catalog is incomplete: a sync stopped midway): run `loyalty sync`, then `loyalty offers` to list them"),
            (.server(status: 404, code: nil, message: "no such device"),
             "the server refused the request (HTTP 404): no such device"),
            (.issuedElsewhere(.retailerKey, issuer: origin("https://shop.example"), server: origin("http://127.0.0.1:9")),
             "the retailer API key in the config was issued by https://shop.example:443, not http://127.0.0.1:9, so it was not sent. If that server has moved to http://127.0.0.1:9, run `loyalty config set server http://127.0.0.1:9 --move-credentials`; to use another server's account, set LOYALTY_HOME to another folder"),
            (.plainHTTP(server: "http://shop.example"),
             "'http://shop.example' is plain http to another machine: anyone on the network between could read tokens and keys. Use https:// (with --ca-file for a private CA), or opt in with --insecure-http or LOYALTY_INSECURE_HTTP=1"),
            (.untrustedCertificate(server: "https://shop.example", detail: "unable to get local issuer certificate"),
             "the certificate of https://shop.example is not trusted (unable to get local issuer certificate), so nothing was sent: if the server's certificate comes from a private CA, give the CA's certificate with --ca-file, LOYALTY_CA_FILE or `loyalty config set ca_file PEM`"),
        ]
        for (error, text) in words { #expect(error.description == text) }
    }
}
