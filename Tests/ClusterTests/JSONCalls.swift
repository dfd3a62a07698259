import Foundation
import HTTPClient

/// An answer of a JSON API call.
struct Reply {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// `method path` on the server at `base` with a bearer `token` and a JSON body, within `totalTimeout` seconds.
func call(
    _ base: String, _ method: String, _ path: String, token: String? = nil,
    json: [String: Any]? = nil,
    headers: [String: String] = [:], totalTimeout: Double = 30
) throws -> Reply {
    var headers = headers
    if let token { headers["Authorization"] = "Bearer \(token)" }
    var body: [UInt8]?
    if let json {
        headers["Content-Type"] = "application/json"
        body = Array(try JSONSerialization.data(withJSONObject: json))
    }
    let response = try HTTPClient().send(
        HTTPClientRequest(
            method: method, url: base + path, headers: headers, body: body, connectTimeout: 2,
            totalTimeout: totalTimeout))
    return Reply(status: response.status, headers: response.headers, body: response.body)
}
