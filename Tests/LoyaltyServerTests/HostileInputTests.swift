import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// Hostile input: text that would drive a shopper's terminal, requests proxies would frame
/// differently, JSON with a key twice, values of the right JSON type but the wrong content.
@Suite struct HostileInputTests {
    /// What a rival would put in a title: clear the screen, colour, forge a line, ring the bell.
    static let forgedTitle = "Rival deal\u{1B}[2J\u{1B}[31mFAKE: Matey's 90% off\u{1B}[0m\r\nline2\u{07}"

    /// Every control a terminal acts on, the line separators and each kind of bidirectional control.
    static let refusedTexts = [
        forgedTitle, "bell\u{07}", "tab\tin", "new\nline", "cr\rhere", "del\u{7F}", "c1 \u{9B}31m", "nel\u{85}",
        "line\u{2028}sep", "para\u{2029}sep", "\u{202E}evil\u{202C}", "lre\u{202A}", "isolate\u{2067}x\u{2069}",
    ]

    @Test func everyRetailerProvidedStringRefusesControlCharactersNamingTheField() throws {
        let tenants = try Tenants()
        let server = tenants.server
        let fields = tenants.stringFields().filter(\.isFreeText)
        #expect(fields.count == 9)
        for field in fields {
            for text in Self.refusedTexts {
                let template = try field.template(tenants)  // may create a link code first
                let before = try server.rows()
                let reply = try template.send(to: server, content: jsonStringContent(text))
                #expect(
                    reply.status == 422 && reply.errorCode == .validationFailed && reply.errorField == field.field,
                    "\(field) with \(text.debugDescription): \(reply.status) \(reply.text)")
                #expect(reply.text.contains("control characters"), "\(reply.text)")
                #expect(try server.rows() == before, "\(field) with \(text.debugDescription) was stored")
            }
        }
        // Text that only looks unusual is still taken as it is.
        for field in fields { try field.expectStored("Caf\u{E9} \u{1F363} \u{5BFF}\u{53F8} \u{200D}", tenants) }
    }

    @Test func theRefusalSaysWhichCharacterAndWhere() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let reply = try server.request(
            "PUT", "/v1/retailer/offers/1/1", token: retailer.apiKey, json: OfferDraft(title: Self.forgedTitle))
        #expect(reply.status == 422 && reply.errorField == "title")
        #expect(reply.text.contains("U+001B at character 11"), "\(reply.text)")
    }

    @Test func aKeyTwiceInOneObjectIsRefused() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let shopper = try server.createAccount()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let before = try server.rows()
        let repeated: [(String, String, String?, String)] = [
            ("PUT", "/v1/retailer/offers/1/1", retailer.apiKey, #"{"title":"a","title":"b"}"#),
            // The same key spelt with an escape.
            ("PUT", "/v1/retailer/offers/1/1", retailer.apiKey, #"{"title":"a","\u0074itle":"b"}"#),
            (
                "POST", "/v1/seen", shopper.deviceToken,
                #"{"items":[{"offer_id":"\#(offer.id)","seen_at":"2027-01-01T00:00:00Z","seen_at":"2027-01-02T00:00:00Z"}]}"#
            ),
            ("POST", "/v1/accounts", nil, #"{"name":"a","name":"b"}"#),
        ]
        for (method, path, token, body) in repeated {
            let reply = try server.request(method, path, token: token, rawJSON: body)
            #expect(reply.status == 400 && reply.errorCode == .malformedJSON, "\(body): \(reply.text)")
            #expect(reply.text.contains("appears twice"), "\(reply.text)")
        }
        #expect(try server.rows() == before)
        // The same key in two objects is no repeat; nor is a key's name inside a string value.
        let twoItems = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            rawJSON:
                #"{"items":[{"offer_id":"\#(offer.id)","seen_at":"2027-01-01T00:00:00Z"},{"offer_id":"\#(UUID())","seen_at":"2027-01-01T00:00:00Z"}]}"#
        )
        #expect(twoItems.status == 200, "\(twoItems.text)")
        let quoted = try server.request(
            "PUT", "/v1/retailer/offers/1/2", token: retailer.apiKey,
            rawJSON: #"{"title":"\"title\": {\"title\"","description":"title"}"#)
        #expect(quoted.status == 201, "\(quoted.text)")
    }

    /// Over a plain socket: libmicrohttpd framed these before the service saw them; the access callback
    /// refuses them.
    @Test func ambiguousFramingAndANULInAHeaderAre400() throws {
        let server = try TestServer(.socket)
        let retailer = try server.registerRetailer()
        let bothLengths = try server.raw(
            "PUT", "/v1/retailer/offers/1/1", token: retailer.apiKey,
            headerLines: ["Transfer-Encoding: chunked"], body: Array(#"{"title":"t"}"#.utf8))
        #expect(bothLengths.status == 400 && bothLengths.errorCode == .badRequest, "\(bothLengths.text)")
        let twoLengths = try server.raw(
            "PUT", "/v1/retailer/offers/1/1", token: retailer.apiKey, headerLines: ["Content-Length: 3"],
            body: Array(#"{"title":"t"}"#.utf8))
        #expect(twoLengths.status == 400 && twoLengths.errorCode == .badRequest, "\(twoLengths.text)")
        // Cut at the NUL, the header would carry the right key.
        let nul = try server.raw("GET", "/v1/retailer", token: retailer.apiKey + "\u{0}junk")
        #expect(nul.status == 400 && nul.errorCode == .badRequest, "\(nul.text)")
        #expect(try server.raw("GET", "/v1/retailer", token: retailer.apiKey).status == 200)
        #expect(try server.request("GET", "/v1/retailer/offers", token: retailer.apiKey).decode(OfferList.self).offers.isEmpty)
    }

    @Test func valuesOfTheRightTypeButWrongContentAre422WithTheProjectsMessage() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let shopper = try server.createAccount()
        let badUUID = try server.request(
            "POST", "/v1/redemptions", token: shopper.deviceToken, rawJSON: #"{"offer_id": "nope"}"#)
        #expect(badUUID.status == 422 && badUUID.errorCode == .validationFailed && badUUID.errorField == "offer_id")
        #expect(badUUID.text.contains("offer_id must be a UUID such as") && !badUUID.text.contains("Attempted"))
        let nestedUUID = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            rawJSON: #"{"items": [{"offer_id": "8F0C1DDC", "seen_at": "2026-01-01T00:00:00Z"}]}"#)
        #expect(nestedUUID.status == 422 && nestedUUID.errorField == "items[0].offer_id", "\(nestedUUID.text)")
        let fraction = try server.request(
            "PUT", "/v1/retailer/offers/1/1", token: retailer.apiKey, rawJSON: #"{"title": "t", "total_limit": 1.5}"#)
        #expect(fraction.status == 422 && fraction.errorField == "total_limit", "\(fraction.text)")
        #expect(fraction.text.contains("must be an integer"), "\(fraction.text)")
        let badDate = try server.request(
            "PUT", "/v1/retailer/offers/1/1", token: retailer.apiKey, rawJSON: #"{"title": "t", "ends_at": "soon"}"#)
        #expect(badDate.status == 422 && badDate.errorField == "ends_at", "\(badDate.text)")
        #expect(badDate.text.contains(LoyaltyJSON.timestampExpectation))
        #expect(try server.request("GET", "/v1/retailer/offers", token: retailer.apiKey).decode(OfferList.self).offers.isEmpty)
    }

    /// `POST /v1/accounts` takes a name only, and says so.
    @Test func anUnknownFieldOfANewAccountNamesOnlyTheFieldsThatExist() throws {
        let server = try TestServer()
        let bogus = try server.request("POST", "/v1/accounts", rawJSON: #"{"bogus":1}"#)
        #expect(bogus.status == 422 && bogus.errorField == "bogus")
        #expect(bogus.text.contains("the fields are name\""), "\(bogus.text)")
        let code = try server.request("POST", "/v1/accounts", rawJSON: #"{"code":"k7m2-q9xp"}"#)
        #expect(code.status == 422 && code.errorField == "code", "\(code.text)")
        #expect(try server.request("POST", "/v1/accounts", rawJSON: #"{"name":"phone"}"#).status == 201)
    }

    @Test func theAllZeroUUIDIsNoProximityUUID() throws {
        let server = try TestServer()
        let reply = try server.request(
            "POST", "/v1/retailers", token: server.operatorToken,
            rawJSON: #"{"name":"Nobody","uuid":"00000000-0000-0000-0000-000000000000"}"#)
        #expect(reply.status == 422 && reply.errorField == "uuid", "\(reply.text)")
        #expect(throws: ValidationError.self) {
            try RetailerRegistration(name: "Nobody", uuid: UUID(uuidString: "00000000-0000-0000-0000-000000000000"))
                .validate()
        }
        #expect(try server.registerRetailer("Somebody").uuid.uuidString != "00000000-0000-0000-0000-000000000000")
    }
}
