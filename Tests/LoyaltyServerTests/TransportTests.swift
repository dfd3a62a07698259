import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

/// In process, the harness decodes a request target as libmicrohttpd does before the handler sees it: the
/// same requests get the same answers both ways.
@Suite struct TransportTests {
    @Test func inProcessAndSocketAnswerAlike() throws {
        let inProcess = try TestServer(.inProcess)
        let socket = try TestServer(.socket)
        var keys: [String] = []
        var tokens: [String] = []
        for server in [inProcess, socket] {
            keys.append(try server.registerRetailer().apiKey)
            tokens.append(try server.createAccount().deviceToken)
        }
        let requests: [(String, String, Int)] = [
            // (method, target, which credential: 0 none, 1 retailer key, 2 device token)
            ("GET", "/v1/nowhere/caf%C3%A9%20x", 0),
            ("GET", "/v1/no%2Fwhere", 0),
            ("GET", "/v1/bad%zzescape%", 0),
            ("GET", "/v1/not%ffutf8", 0),
            ("GET", "/v1/cut%00short", 0),
            ("DELETE", "/v1/retailer/stores/carnaby%00x", 1),
            ("PUT", "/v1/retailer/stores/caf%C3%A9", 1),
            ("DELETE", "/v1/retailer/stores/%63arnaby", 1),
            ("GET", "/v1/catalog?near=1%2C2+3", 2),
            ("GET", "/v1/catalog?near=a+b&near=1,2,3", 2),
            ("GET", "/v1/catalog?limit=%2B5", 2),
            ("GET", "/v1/catalog?limit=1%00", 2),
            ("GET", "/v1/seen?since=a%2Bb+c", 2),
            ("PATCH", "/v1/retailer/offers/1/1", 1),
        ]
        for (method, target, credential) in requests {
            let answers = try [0, 1].map { index in
                let token = [nil, keys[index], tokens[index]][credential]
                return try [inProcess, socket][index].request(method, target, token: token)
            }
            #expect(answers[0].status == answers[1].status, "\(method) \(target)")
            // An error names what the handler saw (the decoded path or value); a 2xx answer holds its server's ids.
            if answers[0].status >= 400 { #expect(answers[0].text == answers[1].text, "\(method) \(target)") }
            #expect(answers[0].headers["allow"] == answers[1].headers["allow"], "\(method) \(target)")
        }
    }
}
