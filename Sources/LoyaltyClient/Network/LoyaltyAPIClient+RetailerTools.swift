import Foundation
import LoyaltyAPI

/// The till, till keys, offers in bulk and figures over time.
extension LoyaltyAPIClient {
    public func createTillKey(name: String, _ credential: Credential) throws(ClientError) -> TillKeyCredentials {
        try call("POST", "/v1/retailer/till-keys", credential: credential, body: TillKeyDraft(name: name))
    }

    /// A new identity key for beacon (major, minor), in its provisioning document: the server shows it only now.
    public func secureBeacon(
        major: UInt16, minor: UInt16, _ request: SecureBeaconRequest, _ credential: Credential
    ) throws(ClientError) -> BeaconProvisioning {
        try call("POST", "/v1/retailer/fleet/\(major)/\(minor)/secure", credential: credential, body: request)
    }

    /// The service's X25519 public key for the Eddystone-EID key exchange.
    public func eidParameters(_ credential: Credential) throws(ClientError) -> EIDParameters {
        try call("GET", "/v1/retailer/eid-params", credential: credential)
    }

    /// Beacon (major, minor) made secure by the key exchange: the service checks its first EID.
    public func registerBeacon(
        major: UInt16, minor: UInt16, _ request: EIDRegistrationRequest, _ credential: Credential
    ) throws(ClientError) -> EIDRegistration {
        try call("POST", "/v1/retailer/fleet/\(major)/\(minor)/eid-registration", credential: credential, body: request)
    }

    /// Every beacon of the fleet, each page followed to the last.
    public func fleet(days: Int, quietDays: Int, _ credential: Credential) throws(ClientError) -> BeaconFleet {
        var query = ["days": String(days), "quiet_days": String(quietDays), "limit": "500"]
        var fleet: BeaconFleet = try call(
            "GET", "/v1/retailer/fleet", query: query, credential: credential, maximumResponseBytes: AnswerSize.list)
        var next = fleet.next
        while let after = next {
            query["after"] = after
            let page: BeaconFleet = try call(
                "GET", "/v1/retailer/fleet", query: query, credential: credential,
                maximumResponseBytes: AnswerSize.list)
            fleet.beacons += page.beacons
            next = page.next
        }
        fleet.next = nil
        return fleet
    }

    public func tillKeys(_ credential: Credential) throws(ClientError) -> TillKeyList {
        try call("GET", "/v1/retailer/till-keys", credential: credential, maximumResponseBytes: AnswerSize.list)
    }

    public func revokeTillKey(_ id: UUID, _ credential: Credential) throws(ClientError) {
        _ = try exchange("DELETE", "/v1/retailer/till-keys/\(id.uuidString)", credential: credential)
    }

    /// `accept` false only reads the code's state; true marks it used at this till. An accept whose answer was
    /// lost (the network, a 503 in a database failover) is retried with the same `Idempotency-Key` a few times,
    /// 2 s apart: the server answers the retry as it did the first accept, so the till never sees its own
    /// acceptance as "already used".
    public func till(_ code: String, accept: Bool, _ credential: Credential) throws(ClientError) -> TillCode {
        guard accept else {
            return try call("POST", "/v1/till/check", credential: credential, body: TillCodeRequest(code: code))
        }
        let key = UUID().uuidString.lowercased()
        var attempt = 1
        while true {
            do {
                return try call(
                    "POST", "/v1/till/accept", credential: credential, headers: ["Idempotency-Key": key],
                    body: TillCodeRequest(code: code))
            } catch {
                let answerMayBeLost =
                    switch error {
                    case .network: true
                    case .server(let status, _, _): status >= 500
                    default: false
                    }
                guard answerMayBeLost, attempt < Self.tillAcceptAttempts, isCancelled?() != true else { throw error }
                attempt += 1
                Thread.sleep(forTimeInterval: 2)
            }
        }
    }

    /// A Patroni failover takes about 20 s (docs/SCALING.md): the tries span most of it.
    static let tillAcceptAttempts = 8

    /// The file's bytes as they are: the server reads the CSV. A file it refused (422, nothing imported) is
    /// `.failure` with each problem and its line.
    public func importOffers(csv: [UInt8], _ credential: Credential) throws(ClientError)
        -> Result<OfferImportResult, OfferImportFailure>
    {
        let response = try exchange(
            "POST", "/v1/retailer/offers/import", credential: credential, headers: ["Content-Type": "text/csv"],
            body: Data(csv), accepting: [422])
        guard response.status == 422 else { return .success(try decode(OfferImportResult.self, response)) }
        let detail = try decode(APIErrorBody.self, response).error
        let problems = detail.rows ?? [OfferImportProblem(line: 1, field: detail.field, message: detail.message)]
        // Printed on the terminal: the server's words escaped, as in every ClientError.
        return .failure(
            OfferImportFailure(
                problems: problems.map {
                    OfferImportProblem(
                        line: $0.line, field: $0.field.map(TerminalText.escaped), message: TerminalText.escaped($0.message))
                }))
    }

    public func exportOffers(_ credential: Credential) throws(ClientError) -> [UInt8] {
        try exchange(
            "GET", "/v1/retailer/offers/export", credential: credential, maximumResponseBytes: AnswerSize.retailerOffers
        ).body
    }

    public func figures(days: Int, _ credential: Credential) throws(ClientError) -> RetailerFigures {
        try call(
            "GET", "/v1/retailer/figures", query: ["days": String(days)], credential: credential,
            maximumResponseBytes: AnswerSize.list)
    }

    public func beaconHealth(quietDays: Int, _ credential: Credential) throws(ClientError) -> BeaconHealthList {
        try call(
            "GET", "/v1/retailer/beacons", query: ["quiet_days": String(quietDays)], credential: credential,
            maximumResponseBytes: AnswerSize.list)
    }
}
