import Foundation
import LoyaltyServer
import Testing

@Suite struct ServerLogTests {
    @Test func timeLevelAndEventComeFirstThenTheFieldsInOrder() throws {
        let line = ServerLog.line(
            .warning, "request",
            ["route": .string("/v1/catalog"), "status": .int(422), "skipped": nil, "duration_ms": .double(0.25)],
            time: Date(timeIntervalSince1970: 1_769_850_000.5))
        #expect(
            line
                == #"{"time":"2026-01-31T09:00:00.500Z","level":"warning","event":"request","route":"/v1/catalog","status":422,"duration_ms":0.25}"#
        )
    }

    /// A value cannot end the line or forge a field: quotes, backslashes and control characters are escaped.
    @Test func valuesAreEscapedOntoOneLine() throws {
        let hostile = "x\",\"level\":\"info\"}\n{\"event\":\"forged\\\u{1}"
        let line = ServerLog.line(.error, "failed", ["error": .string(hostile)], time: Date(timeIntervalSince1970: 0))
        #expect(!line.contains("\n"))
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(fields["error"] as? String == hostile)
        #expect(fields["level"] as? String == "error" && fields["event"] as? String == "failed")
        #expect(fields["time"] as? String == "1970-01-01T00:00:00Z")
    }

    @Test func aNumberThatJSONCannotHoldIsNull() throws {
        let line = ServerLog.line(.info, "e", ["n": .double(.nan)], time: Date(timeIntervalSince1970: 0))
        #expect(line.hasSuffix(#","n":null}"#))
        #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
    }
}
