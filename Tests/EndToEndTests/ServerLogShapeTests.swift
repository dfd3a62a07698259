import Foundation
import HTTPClient
import LoyaltyTesting
import Testing

/// The real `loyalty-server`'s standard error: every line one JSON object with time, level and event first.
@Suite struct ServerLogShapeTests {
    @Test func everyLineStartsWithTimeLevelAndEvent() throws {
        let server = try StoryServer.shared.get()
        let requestID = "log-shape-" + UUID().uuidString.prefix(8)
        let answer = try HTTPClient().send(
            HTTPClientRequest(url: server.url + "/healthz", headers: ["X-Request-Id": requestID]))
        #expect(answer.status == 200)
        let log = server.work.appendingPathComponent("server.log")
        var lines: [String] = []
        // The line is written after the answer is sent.
        for _ in 0..<100 {
            lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map(String.init)
            if lines.contains(where: { $0.contains(requestID) }) { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let shape = #"^\{"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z","level":"(info|warning|error)","event":"[a-z_]+""#
        for line in lines {
            #expect(line.range(of: shape, options: .regularExpression) != nil, "\(line)")
            #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any], "\(line)")
        }
        #expect(lines.contains { $0.contains(#""event":"started","url":"\#(server.url)""#) }, "\(lines)")
        let request = try #require(lines.first { $0.contains(requestID) })
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(request.utf8)) as? [String: Any])
        #expect(fields["event"] as? String == "request" && fields["level"] as? String == "info")
        #expect(fields["route"] as? String == "/healthz" && fields["status"] as? Int == 200)
    }
}
