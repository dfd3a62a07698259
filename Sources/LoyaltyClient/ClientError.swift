import Foundation
import LoyaltyAPI

/// Everything that can go wrong in the client. Failures of files, the network and the server carry their
/// message; what a person has to do something about carries data, and the CLI words it with the command that
/// does it.
public enum ClientError: Error, Equatable, Sendable {
    /// A setting is wrong (server URL, timeout, state directory).
    case configuration(String)
    /// A local file could not be read or written.
    case io(String)
    /// The server could not be reached or did not answer in time.
    case network(String)
    /// A credential was refused: by the server (401/403), or before sending for its shape.
    case unauthorized(Refusal)
    /// The server answered with an error body.
    case server(status: Int, code: APIErrorCode?, message: String)
    /// The server answered something that is not the API's JSON.
    case protocolViolation(String)
    /// The cache file at `path` is damaged, or was written by a newer version (`newerSchema`): a full sync
    /// rebuilds it.
    case corruptCache(path: String, newerSchema: Int?)
    /// What this device or retailer lacks to make the request.
    case notRegistered(Missing)
    /// This device already belongs to `account`; `linking`: it was asked to join another one.
    case alreadyInAccount(UUID, linking: Bool)
    /// The user named an offer that does not exist locally.
    case notFound(OfferLookup)
    /// A library this program needs is missing (libcurl): nothing is sent until it is installed.
    case unavailable(String)
    /// A credential kept here was issued by `issuer`, and the command would have sent it to `server`: not sent.
    case issuedElsewhere(IssuedCredential, issuer: ServerOrigin, server: ServerOrigin)
    /// `server` is plain http to a host that is not this machine, and the user did not opt in: nothing was sent.
    case plainHTTP(server: String)
    /// The server's TLS certificate was not trusted (a private CA not given, a wrong name, an expired one).
    case untrustedCertificate(server: String, detail: String)

    /// A credential this client keeps, with the server that issued it.
    public enum IssuedCredential: Equatable, Sendable {
        case deviceToken
        case retailerKey
    }

    /// Which credential was refused.
    public enum Refusal: Equatable, Sendable {
        /// The server asked for credentials and the request carried none.
        case none
        case device
        case retailer
        case till
        case `operator`
        /// LOYALTY_RETAILER_KEY holds a character no key has (a line break pasted with it, say).
        case retailerKeyVariable
    }

    /// What a request needs that is not there.
    public enum Missing: Equatable, Sendable {
        /// This device has no shopper account.
        case account
        /// No retailer API key, in the config or LOYALTY_RETAILER_KEY.
        case retailerKey
        /// Registering a retailer needs the operator's token (LOYALTY_ADMIN_TOKEN).
        case operatorToken
    }

    /// Why an offer the user named was not found.
    public enum OfferLookup: Equatable, Sendable {
        /// The text is neither an offer id nor UUID:MAJOR:MINOR.
        case notAnOffer(String)
        /// No cached offer has that id or beacon; `catalogPartial`: a full sync stopped midway.
        case notCached(catalogPartial: Bool)
        /// No retailer of that name in the directory (`follow`), or none followed (`unfollow`), as typed.
        case noRetailer(String)
    }

    /// The words of a case that carries them (nil for the cases that carry data): what this module adds to
    /// when it says more about a failure.
    public var message: String? {
        switch self {
        case .configuration(let message), .io(let message), .network(let message), .protocolViolation(let message),
            .unavailable(let message):
            message
        case .server(let status, _, let message):
            "the server refused the request (HTTP \(status)): \(message)"
        case .unauthorized, .corruptCache, .notRegistered, .alreadyInAccount, .notFound, .issuedElsewhere, .plainHTTP,
            .untrustedCertificate:
            nil
        }
    }
}
