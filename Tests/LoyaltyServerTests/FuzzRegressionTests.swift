import Foundation
import HTTPServer
import JSONCoding
import LoyaltyAPI
import Testing

@testable import LoyaltyServer

/// Inputs `make fuzz` (Fuzz/RequestBodyFuzzer.swift) and the API fuzzing of `make check` (schemathesis) found,
/// kept so the bugs stay fixed.
@Suite struct FuzzRegressionTests {
    private func decode<T: RequestBody>(_ type: T.Type, _ json: String) throws(APIFailure) -> T {
        try HTTPRequest(method: "PUT", path: "/", body: Array(json.utf8)).decodeBody(T.self)
    }

    /// Fuzz/regressions/request-body/crash-dfe04a64...: Foundation's ISO 8601 parser read
    /// "2026-12-31T23:59:59.26-12-31T23:59:59.500Z" as a date (offset "-12", the rest ignored).
    @Test func timestampsWithTrailingTextAreRefused() {
        for text in ["2026-12-31T23:59:59.26-12-31T23:59:59.500Z", "2026-12-31T23:59:59Zjunk", "2026-12-31T23:59:59"] {
            #expect(LoyaltyJSON.parseTimestamp(text) == nil, "\(text)")
            #expect(throws: APIFailure.self) {
                try decode(OfferDraft.self, #"{"title": "t", "ends_at": "\#(text)"}"#)
            }
        }
        #expect(LoyaltyJSON.parseTimestamp("2026-01-01t00:00:00+02:00") != nil)
    }

    /// The same input's second failure: 59.26 s formatted as ".259" (the binary fraction truncated), so an
    /// offer's window moved by a millisecond each time a client read it and sent it back.
    @Test func timestampsRoundTripToTheMillisecond() throws {
        let draft = try decode(OfferDraft.self, #"{"title": "t", "ends_at": "2026-12-31T23:59:59.26Z"}"#)
        let sent = String(decoding: try LoyaltyJSON.encoder().encode(draft), as: UTF8.self)
        #expect(sent.contains(#""ends_at":"2026-12-31T23:59:59.260Z""#))
        #expect(try decode(OfferDraft.self, sent) == draft)
        #expect(LoyaltyJSON.formatTimestamp(Date(timeIntervalSince1970: 0.9996)) == "1970-01-01T00:00:01Z")
        #expect(LoyaltyJSON.formatTimestamp(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
    }

    /// schemathesis: "0219-06-06T06:30:34-21:27" is a valid RFC 3339 date-time that Foundation's parser refused,
    /// so the server answered 400 malformed_json instead of 422 (out of the storable range).
    @Test func everyRFC3339DateTimeIsReadAndOnlyThose() throws {
        #expect(throws: APIFailure.self) {
            try decode(OfferDraft.self, #"{"title": "t", "ends_at": "0219-06-06T06:30:34-21:27"}"#)
        }
        do {
            _ = try decode(OfferDraft.self, #"{"title": "t", "ends_at": "0219-06-06T06:30:34-21:27"}"#)
        } catch {
            #expect(error.status == 422 && error.body.error.field == "ends_at")
        }
        let offset = try #require(LoyaltyJSON.parseTimestamp("2026-01-31T09:00:00-05:30"))
        #expect(offset == Date(timeIntervalSince1970: 1_769_869_800))
        #expect(LoyaltyJSON.parseTimestamp("2024-02-29T12:00:00Z") != nil)
        for text in [
            "2023-02-29T12:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00+24:00",
        ] {
            #expect(LoyaltyJSON.parseTimestamp(text) == nil, "\(text)")
        }
    }
}
