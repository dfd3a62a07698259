import Foundation
import JSONCoding
import LoyaltyAPI

/// A set-up request that did not get the answer the test needs; the test fails with it.
public struct UnexpectedResponse: Error, CustomStringConvertible {
    public var request: String
    public var response: TestResponse

    public var description: String { "\(request) answered \(response.status): \(response.text)" }
}

extension TestServer {
    /// A request with a bearer `token` and, with a `body`, Content-Type application/json.
    public func request(
        _ method: String, _ target: String, token: String? = nil, body: [UInt8]? = nil,
        headers: [String: String] = [:]
    ) throws -> TestResponse {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        return try execute(TestRequest(method, target, headers: headers, body: body))
    }

    public func request<Body: Encodable>(
        _ method: String, _ target: String, token: String? = nil, json: Body, headers: [String: String] = [:]
    ) throws -> TestResponse {
        try request(method, target, token: token, body: self.json(json), headers: headers)
    }

    public func request(
        _ method: String, _ target: String, token: String? = nil, rawJSON: String, headers: [String: String] = [:]
    ) throws -> TestResponse {
        try request(method, target, token: token, body: Array(rawJSON.utf8), headers: headers)
    }

    // MARK: Fixtures

    public func registerRetailer(_ name: String = "Matey's", uuid: UUID? = nil) throws -> RetailerCredentials {
        let registration = try json(RetailerRegistration(name: name, uuid: uuid))
        return try expecting([201], "POST", "/v1/retailers", token: operatorToken, body: registration).decode()
    }

    @discardableResult
    public func putOffer(_ retailer: RetailerCredentials, major: Int, minor: Int, _ draft: OfferDraft) throws -> Offer {
        let target = "/v1/retailer/offers/\(major)/\(minor)"
        return try expecting([200, 201], "PUT", target, token: retailer.apiKey, body: json(draft)).decode()
    }

    /// A new shopper account; with a `name`, its first device is called that.
    public func createAccount(name: String? = nil) throws -> DeviceCredentials {
        try expecting([201], "POST", "/v1/accounts", body: try name.map { try json(DeviceRegistration(name: $0)) })
            .decode()
    }

    public func linkDevice(to device: DeviceCredentials, name: String = "second") throws -> DeviceCredentials {
        let code: LinkCode = try expecting([201], "POST", "/v1/link-codes", token: device.deviceToken).decode()
        return try expecting([201], "POST", "/v1/devices", body: json(DeviceRegistration(code: code.code, name: name)))
            .decode()
    }

    public func catalog(_ device: DeviceCredentials, since: String? = nil, limit: Int? = nil, etag: String? = nil)
        throws -> TestResponse
    {
        let parameters = [since.map { "since=\($0)" }, limit.map { "limit=\($0)" }].compactMap { $0 }
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        return try request(
            "GET", "/v1/catalog\(query)", token: device.deviceToken, headers: etag.map { ["If-None-Match": $0] } ?? [:])
    }

    /// Records that the device's account saw the offer now, as a scan near its beacon does: redeeming needs it.
    public func see(_ device: DeviceCredentials, _ offerIDs: UUID...) throws {
        let push = try json(SeenPush(items: offerIDs.map { SeenItem(offerID: $0, seenAt: clock.read()) }))
        _ = try expecting([200], "POST", "/v1/seen", token: device.deviceToken, body: push)
    }

    public func redeem(_ device: DeviceCredentials, _ offerID: UUID, key: String? = nil) throws -> TestResponse {
        try request(
            "POST", "/v1/redemptions", token: device.deviceToken, json: RedemptionRequest(offerID: offerID),
            headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    private func expecting(
        _ statuses: Set<Int>, _ method: String, _ target: String, token: String? = nil, body: [UInt8]? = nil
    ) throws -> TestResponse {
        let response = try request(method, target, token: token, body: body)
        guard statuses.contains(response.status) else {
            throw UnexpectedResponse(request: "\(method) \(target)", response: response)
        }
        return response
    }

    private func json(_ value: some Encodable) throws -> [UInt8] {
        Array(try LoyaltyJSON.encoder().encode(value))
    }
}
