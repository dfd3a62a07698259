import Foundation
import HTTPServer
import LoyaltyAPI
import Testing

@testable import LoyaltyServer

/// Inputs `make fuzz` found (Fuzz/RequestBodyFuzzer.swift), kept so the bugs stay fixed.
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
}
