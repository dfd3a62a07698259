import LoyaltyAPI

/// Everything that can go wrong in the client, each case worded as one line saying what to do.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A setting is wrong (server URL, timeout, state directory).
    case configuration(String)
    /// A local file could not be read or written.
    case io(String)
    /// The server could not be reached or did not answer in time.
    case network(String)
    /// The token was refused (401/403): revoked device, rotated retailer key, wrong operator token.
    case unauthorized(String)
    /// The server answered with an error body.
    case server(status: Int, code: APIErrorCode?, message: String)
    /// The server answered something that is not the API's JSON.
    case protocolViolation(String)
    /// The cache file is damaged; `loyalty sync --full` rebuilds it.
    case corruptCache(String)
    /// This device has no account yet, or no retailer key is configured.
    case notRegistered(String)
    /// The user named something that does not exist locally (an offer, a device).
    case notFound(String)
    /// A library this program needs is missing (libcurl): nothing is sent until it is installed.
    case unavailable(String)

    public var description: String {
        switch self {
        case .configuration(let message), .io(let message), .network(let message),
            .unauthorized(let message), .protocolViolation(let message), .corruptCache(let message),
            .notRegistered(let message), .notFound(let message), .unavailable(let message):
            message
        case .server(let status, _, let message):
            "the server refused the request (HTTP \(status)): \(message)"
        }
    }
}
