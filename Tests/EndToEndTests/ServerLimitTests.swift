import Foundation
import HTTPClient
import LoyaltyAPI
import LoyaltyTesting
import Testing

/// The real `loyalty-server`'s answer to a request target with more query parameters than a connection's memory
/// holds (issue 23, item 15): once no answer and a held connection, now 414 at once, and the server goes on.
@Suite struct ServerLimitTests {
    @Test func tooManyQueryParametersAreAnswered414AndTheServerGoesOn() throws {
        let server = try StoryServer.shared.get()
        let client = HTTPClient()
        let query = (0..<2_000).map { "p\($0)=\($0)" }.joined(separator: "&")
        for _ in 0..<10 {
            let refused = try client.send(HTTPClientRequest(url: server.url + "/v1/catalog?" + query))
            #expect(refused.status == 414 && refused.headers["connection"] == "close")
            let error = try JSONDecoder().decode(APIErrorBody.self, from: Data(refused.body)).error
            #expect(error.code == .badRequest && error.message.contains("more than 100 query parameters"), "\(error)")
        }
        #expect(try client.send(HTTPClientRequest(url: server.url + "/healthz?a=1")).status == 200)
    }
}
