import Foundation
import HTTPClient
import JSONCoding
import LoyaltyAPI

/// Which secret a request carries, so a refusal can say which one to fix.
public enum Credential: Sendable {
    case none
    case device(String)
    case retailer(String)
    case till(String)
    case `operator`(String)

    var token: String? {
        switch self {
        case .none: nil
        case .device(let token), .retailer(let token), .till(let token), .operator(let token): token
        }
    }

    /// What a 401 or 403 to a request with this credential means.
    var refusal: ClientError.Refusal {
        switch self {
        case .none: .none
        case .device: .device
        case .retailer: .retailer
        case .till: .till
        case .operator: .operator
        }
    }
}

/// The connect and whole-request time limits, in seconds.
public struct Timeouts: Sendable, Equatable {
    public var connect: Double
    public var total: Double

    public init(connect: Double = 5, total: Double = 30) {
        self.connect = connect
        self.total = total
    }
}

/// The most bytes an answer may have, by what it can hold: a server (or anyone between, on plain http) that
/// sends more is cut off there (`ClientError.protocolViolation`) instead of filling memory.
enum AnswerSize {
    /// One object: an account, a code, a redemption, a key, an offer, a store, an import's result.
    static let single = 1 << 20
    /// A list that comes whole (devices, redemptions, stores, till keys, the seen set, figures): thousands of
    /// rows of a few hundred bytes each, with room to spare.
    static let list = 64 << 20
    /// A retailer's own offers, listed or exported: as many as a full catalog page holds.
    static let retailerOffers = CatalogPage.maximumJSONBytes(rows: CatalogPage.maximumRows)
}

/// Typed calls of the loyalty HTTP API (openapi.yaml) over libcurl, on one kept-alive connection.
/// Confined to one task at a time, like the `HTTPClient` it owns.
public final class LoyaltyAPIClient {
    public let server: URL
    public let timeouts: Timeouts
    /// The CAs to trust for https instead of the system's (a PEM file), or nil.
    public let caFile: String?
    /// Asked while a request waits (a scan's Ctrl-C): true abandons it.
    public var isCancelled: (@Sendable () -> Bool)?
    /// Made on the first request: an offline scan never pays for libcurl's and TLS's start-up.
    private lazy var http = HTTPClient()

    public init(server: URL, timeouts: Timeouts = Timeouts(), caFile: String? = nil) {
        self.server = server
        self.timeouts = timeouts
        self.caFile = caFile
    }

    /// Who credentials this client receives come from (`server`'s scheme, host and port).
    public var origin: ServerOrigin? { ServerOrigin(server) }

    // MARK: shoppers

    public func createAccount(deviceName: String?) throws(ClientError) -> DeviceCredentials {
        try call("POST", "/v1/accounts", body: AccountRegistration(name: deviceName))
    }

    public func createLinkCode(_ credential: Credential) throws(ClientError) -> LinkCode {
        try call("POST", "/v1/link-codes", credential: credential)
    }

    public func linkDevice(code: String, deviceName: String?) throws(ClientError) -> DeviceCredentials {
        try call("POST", "/v1/devices", body: DeviceRegistration(code: code, name: deviceName))
    }

    public func devices(_ credential: Credential) throws(ClientError) -> DeviceList {
        try call("GET", "/v1/devices", credential: credential, maximumResponseBytes: AnswerSize.list)
    }

    public func revokeDevice(_ id: UUID, _ credential: Credential) throws(ClientError) {
        _ = try exchange("DELETE", "/v1/devices/\(id.uuidString.lowercased())", credential: credential)
    }

    /// What `GET /v1/catalog` answered.
    public enum CatalogAnswer: Sendable {
        case page(CatalogPage, etag: String?)
        /// 304: nothing changed since the ETag.
        case notModified
        /// 410: the cursor is too old; fetch again without one.
        case cursorExpired
    }

    /// One page of the catalog feed. With `area`, the part of the catalog around a point (always a
    /// full page); `limit` caps the rows of a page (nil: the server's default).
    public func catalog(
        since cursor: String?, etag: String?, area: CatalogArea? = nil, limit: Int? = nil, _ credential: Credential
    )
        throws(ClientError) -> CatalogAnswer
    {
        try catalogAnswer(catalogResponse(since: cursor, etag: etag, area: area, limit: limit, credential))
    }

    /// `catalog`'s exchange, the body left undecoded: `CatalogDownload` fetches on one thread and
    /// decodes on another.
    func catalogResponse(
        since cursor: String?, etag: String?, area: CatalogArea?, limit: Int?, _ credential: Credential,
        into bodyFile: Int32? = nil
    ) throws(ClientError) -> HTTPClientResponse {
        var headers: [String: String] = [:]
        if let etag, cursor != nil { headers["If-None-Match"] = etag }
        var query = area?.queryItems ?? [:]
        if let cursor { query["since"] = cursor }
        if let limit { query["limit"] = String(limit) }
        // A page, an area's too, holds at most `limit` rows: no longer than that many of the longest rows.
        return try exchange(
            "GET", "/v1/catalog", query: query, credential: credential, headers: headers,
            accepting: [304, 410],
            maximumResponseBytes: CatalogPage.maximumJSONBytes(rows: limit ?? CatalogPage.maximumRows),
            bodyFile: bodyFile)
    }

    func catalogAnswer(_ response: HTTPClientResponse) throws(ClientError) -> CatalogAnswer {
        switch response.status {
        case 304: .notModified
        case 410: .cursorExpired
        default: .page(try decodePage(response), etag: response.header("ETag"))
        }
    }

    /// Catalog pages have a coder of their own: a full catalog is too large for `JSONDecoder`'s pace.
    private func decodePage(_ response: HTTPClientResponse) throws(ClientError) -> CatalogPage {
        try understood { () throws(JSONCodingError) in try CatalogPage(json: response.body) }
    }

    /// A page read from its file's `bytes`: its own fields, each row handed to `rows` as it is read (see
    /// `CatalogPage.read(json:rows:progress:)`).
    func readPage(
        _ bytes: UnsafeBufferPointer<UInt8>, rows: (CatalogPage.Row) -> Bool, progress: @escaping (Int) -> Void
    ) throws(ClientError) -> CatalogPage {
        try understood { () throws(JSONCodingError) in
            try CatalogPage.read(json: bytes, rows: rows, progress: progress)
        }
    }

    private func understood(_ read: () throws(JSONCodingError) -> CatalogPage) throws(ClientError)
        -> CatalogPage
    {
        do throws(JSONCodingError) {
            return try read()
        } catch {
            throw .protocolViolation(
                "the server at \(server.absoluteString) answered a catalog page this client does not understand (\(error)): is it a loyalty server of the same version?"
            )
        }
    }

    public func pushSeen(_ items: [SeenItem], _ credential: Credential) throws(ClientError)
        -> SeenPushResult
    {
        try call("POST", "/v1/seen", credential: credential, body: SeenPush(items: items))
    }

    /// `GET /healthz`: whether the service answers at all.
    public func checkHealth() throws(ClientError) {
        _ = try exchange("GET", "/healthz")
    }

    /// `POST /v1/sightings`: what the device heard of secure beacons; the answer lists those that resolved.
    public func resolveSightings(_ sightings: [Sighting], _ credential: Credential) throws(ClientError)
        -> SightingResolution
    {
        try call("POST", "/v1/sightings", credential: credential, body: SightingBatch(sightings: sightings))
    }

    public func seen(since cursor: String?, _ credential: Credential) throws(ClientError) -> SeenPage {
        try call(
            "GET", "/v1/seen", query: cursor.map { ["since": $0] } ?? [:], credential: credential,
            maximumResponseBytes: AnswerSize.list)
    }

    public func redeem(offerID: UUID, idempotencyKey: String, _ credential: Credential)
        throws(ClientError)
        -> Redemption
    {
        try call(
            "POST", "/v1/redemptions", credential: credential,
            headers: ["Idempotency-Key": idempotencyKey],
            body: RedemptionRequest(offerID: offerID))
    }

    public func redemptions(_ credential: Credential) throws(ClientError) -> RedemptionList {
        try call("GET", "/v1/redemptions", credential: credential, maximumResponseBytes: AnswerSize.list)
    }

    // MARK: retailers

    public func registerRetailer(_ registration: RetailerRegistration, _ credential: Credential)
        throws(ClientError)
        -> RetailerCredentials
    {
        try call("POST", "/v1/retailers", credential: credential, body: registration)
    }

    public func retailer(_ credential: Credential) throws(ClientError) -> Retailer {
        try call("GET", "/v1/retailer", credential: credential)
    }

    public func rotateKey(_ credential: Credential) throws(ClientError) -> APIKey {
        try call("POST", "/v1/retailer/key", credential: credential)
    }

    public func putOffer(major: UInt16, minor: UInt16, _ draft: OfferDraft, _ credential: Credential)
        throws(ClientError) -> Offer
    {
        try call("PUT", "/v1/retailer/offers/\(major)/\(minor)", credential: credential, body: draft)
    }

    public func deleteOffer(major: UInt16, minor: UInt16, _ credential: Credential)
        throws(ClientError)
    {
        _ = try exchange("DELETE", "/v1/retailer/offers/\(major)/\(minor)", credential: credential)
    }

    public func retailerOffers(_ credential: Credential) throws(ClientError) -> OfferList {
        try call("GET", "/v1/retailer/offers", credential: credential, maximumResponseBytes: AnswerSize.retailerOffers)
    }

    public func putStore(_ storeID: String, _ draft: StoreDraft, _ credential: Credential)
        throws(ClientError)
        -> RetailStore
    {
        try call("PUT", "/v1/retailer/stores/\(storeID)", credential: credential, body: draft)
    }

    public func deleteStore(_ storeID: String, _ credential: Credential) throws(ClientError) {
        _ = try exchange("DELETE", "/v1/retailer/stores/\(storeID)", credential: credential)
    }

    public func retailerStores(_ credential: Credential) throws(ClientError) -> StoreList {
        try call("GET", "/v1/retailer/stores", credential: credential, maximumResponseBytes: AnswerSize.list)
    }

    public func statistics(_ credential: Credential) throws(ClientError) -> RetailerStatistics {
        try call("GET", "/v1/retailer/stats", credential: credential, maximumResponseBytes: AnswerSize.list)
    }

    // MARK: transport

    func call<Answer: Decodable>(
        _ method: String, _ path: String, query: [String: String] = [:], credential: Credential = .none,
        headers: [String: String] = [:], maximumResponseBytes: Int = AnswerSize.single
    ) throws(ClientError) -> Answer {
        try decode(
            Answer.self,
            exchange(
                method, path, query: query, credential: credential, headers: headers,
                maximumResponseBytes: maximumResponseBytes))
    }

    func call<Answer: Decodable, Body: Encodable>(
        _ method: String, _ path: String, query: [String: String] = [:], credential: Credential = .none,
        headers: [String: String] = [:], body: Body
    ) throws(ClientError) -> Answer {
        let data: Data
        do {
            data = try LoyaltyJSON.encoder().encode(body)
        } catch {
            throw .protocolViolation("cannot encode the request: \(error)")
        }
        return try decode(
            Answer.self,
            exchange(method, path, query: query, credential: credential, headers: headers, body: data))
    }

    /// Sends one request; answers a 2xx (or a status in `accepting`), throws the rest as `ClientError`.
    func exchange(
        _ method: String, _ path: String, query: [String: String] = [:], credential: Credential = .none,
        headers: [String: String] = [:], body: Data? = nil, accepting: Set<Int> = [],
        maximumResponseBytes: Int = AnswerSize.single, bodyFile: Int32? = nil
    ) throws(ClientError) -> HTTPClientResponse {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        components.path = components.path.trimmingSuffix("/") + path
        if !query.isEmpty {
            components.queryItems = query.sorted { $0.key < $1.key }.map {
                URLQueryItem(name: $0.key, value: $0.value)
            }
            // `+` in a cursor must survive; URLComponents leaves it alone in queries.
            components.percentEncodedQuery = components.percentEncodedQuery?
                .replacingOccurrences(of: "+", with: "%2B")
        }
        var allHeaders = headers
        allHeaders["Accept"] = "application/json"
        if let token = credential.token { allHeaders["Authorization"] = "Bearer \(token)" }
        if body != nil, headers["Content-Type"] == nil { allHeaders["Content-Type"] = "application/json" }
        var request = HTTPClientRequest(
            method: method, url: components.url!.absoluteString, headers: allHeaders,
            body: body.map { [UInt8]($0) },
            connectTimeout: timeouts.connect, totalTimeout: timeouts.total, isCancelled: isCancelled,
            maximumResponseBytes: maximumResponseBytes, caFile: caFile)
        request.bodyFile = bodyFile
        let response: HTTPClientResponse
        do {
            response = try http.send(request)
        } catch {
            if case .libraryUnavailable(let detail) = error { throw .unavailable(detail) }
            if case .cancelled = error { throw .network(error.description) }
            if case .responseTooLarge = error { throw .protocolViolation(error.description) }
            if case .untrustedCertificate(_, let detail) = error {
                throw .untrustedCertificate(server: server.absoluteString, detail: TerminalText.escaped(detail))
            }
            // libcurl's own words can quote the server's answer.
            throw .network("\(TerminalText.escaped(error.description)) (server URL: --server, LOYALTY_SERVER or the config file)")
        }
        if (200..<300).contains(response.status) || accepting.contains(response.status) {
            return response
        }
        let detail = try? LoyaltyJSON.decoder().decode(APIErrorBody.self, from: Data(response.body))
            .error
        switch response.status {
        case 401, 403:
            throw .unauthorized(credential.refusal)
        default:
            // The server's message is printed by every command's `error:` line and the scan's warnings:
            // escaped here, once, for all of them.
            throw .server(
                status: response.status, code: detail?.code,
                message: detail.map { TerminalText.escaped($0.message) } ?? "unexpected answer from \(server.absoluteString)\(path)")
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ response: HTTPClientResponse)
        throws(ClientError) -> T
    {
        do {
            return try LoyaltyJSON.decoder().decode(type, from: Data(response.body))
        } catch {
            throw .protocolViolation(
                "the server at \(server.absoluteString) answered something this client does not understand (HTTP \(response.status)): is it a loyalty server of the same version?"
            )
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
