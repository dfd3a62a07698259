/// The machine-readable half of every error answer; the HTTP status travels with it.
public enum APIErrorCode: String, Codable, Sendable, CaseIterable {
    /// 400: the body is not JSON, or a value has the wrong type.
    case malformedJSON = "malformed_json"
    /// 400: a query parameter or header is malformed (a cursor that was not made by this server...).
    case badRequest = "bad_request"
    /// 401: the bearer token is missing, unknown or revoked.
    case unauthorized
    /// 403: the token is valid but not for this operation.
    case forbidden
    /// 404: no such route or resource (or it belongs to someone else).
    case notFound = "not_found"
    /// 405: the route exists with other methods.
    case methodNotAllowed = "method_not_allowed"
    /// 408: the request's body came too slowly (a minimum rate over its length); send it again.
    case requestTimeout = "request_timeout"
    /// 409: the proximity UUID is taken by another retailer.
    case uuidTaken = "uuid_taken"
    /// 409: another retailer's name reads the same (case, width, spacing and invisible characters aside).
    case nameTaken = "name_taken"
    /// 409: an `Idempotency-Key` was reused for a different request.
    case idempotencyKeyReused = "idempotency_key_reused"
    /// 409: the per-shopper or total redemption limit is reached.
    case limitReached = "limit_reached"
    /// 409: the account has not seen the offer (near its beacon, as a scan records it), so cannot redeem it.
    case offerNotSeen = "offer_not_seen"
    /// 409: the offer is on a secure beacon and the account has no recent verified sighting of it.
    case presenceNotVerified = "presence_not_verified"
    /// 409: the offer has a weekly schedule and it is outside its hours now.
    case offerOutOfHours = "offer_out_of_hours"
    /// 410: the offer was removed or is outside its validity window.
    case offerUnavailable = "offer_unavailable"
    /// 410: the catalog cursor can no longer be served; sync again without `since`.
    case cursorExpired = "cursor_expired"
    /// 404: the link code is unknown, expired or already used.
    case linkCodeInvalid = "link_code_invalid"
    /// 404: no redemption of this retailer has the code (another retailer's code is unknown too).
    case codeUnknown = "code_unknown"
    /// 409: a till accepted the code already; the message says when and at which till.
    case codeAlreadyAccepted = "code_already_accepted"
    /// 410: the code's offer has ended.
    case codeExpired = "code_expired"
    /// 410: the code's offer was removed.
    case codeOfferRemoved = "code_offer_removed"
    /// 410: the shopper deleted their account, and the code, unspent, died with it.
    case codeAccountDeleted = "code_account_deleted"
    /// 413: the body is over the size limit.
    case payloadTooLarge = "payload_too_large"
    /// 422: a field is missing, unknown or out of range; `field` names it.
    case validationFailed = "validation_failed"
    /// 429: too many attempts from this address or for this account; retry after `Retry-After` seconds.
    case rateLimited = "rate_limited"
    /// 503: the server holds as many request bodies as it may at once; retry after `Retry-After` seconds.
    case serverBusy = "server_busy"
    /// 503: the database is unreachable; retry later.
    case databaseUnavailable = "database_unavailable"
    /// 500: a bug; the request id in the logs says more.
    case internalError = "internal_error"
}

/// `{"error": {"code": "snake_case", "message": "what to do", "field": "title"}}`
public struct APIErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: APIErrorCode
        public var message: String
        /// The offending field (JSON key, path or query parameter), when there is one.
        public var field: String?
        /// An import's refused rows, each naming its line (at most `OfferCSV.maxProblemsListed`).
        public var rows: [OfferImportProblem]?

        public init(code: APIErrorCode, message: String, field: String? = nil, rows: [OfferImportProblem]? = nil) {
            self.code = code
            self.message = message
            self.field = field
            self.rows = rows
        }
    }

    public var error: Detail

    public init(code: APIErrorCode, message: String, field: String? = nil, rows: [OfferImportProblem]? = nil) {
        error = Detail(code: code, message: message, field: field, rows: rows)
    }
}

/// A rule a request broke, naming the field so the caller can fix it (answered as 422).
public struct ValidationError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
