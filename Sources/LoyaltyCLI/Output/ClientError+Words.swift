import LoyaltyClient

/// The client's errors in words: the cases that carry data are worded here, with the `loyalty` command that
/// does something about them; the others carry their message.
extension ClientError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .unauthorized(let refusal):
            return refusal.words
        case .corruptCache(let path, let newerSchema?):
            return "the cache \(path) was written by a newer loyalty (schema \(newerSchema)): upgrade, or run `loyalty sync --full` to rebuild it"
        case .corruptCache(let path, nil):
            return "the cache \(path) is damaged: run `loyalty sync --full` to rebuild it from the server"
        case .notRegistered(.account):
            return "this device has no account: run `loyalty account create`, or `loyalty account link CODE` to join one"
        case .notRegistered(.retailerKey):
            return "no retailer API key: run `loyalty retailer register --name NAME` or `loyalty retailer key set`, or set LOYALTY_RETAILER_KEY"
        case .notRegistered(.operatorToken):
            return "set LOYALTY_ADMIN_TOKEN to the server operator's token (loyalty-server prints where it keeps it)"
        case .alreadyInAccount(let account, let linking):
            let account = account.uuidString.lowercased()
            return linking
                ? "this device already belongs to account \(account); to move it, run `loyalty account link --replace CODE`"
                : "this device already belongs to account \(account): see `loyalty account show`"
        case .notFound(.notAnOffer(let text)):
            return "'\(text)' is not an offer: give an offer id or UUID:MAJOR:MINOR (see `loyalty offers`)"
        case .notFound(.noRetailer(let name)):
            return "no retailer named '\(TerminalText.escaped(name))' here: `loyalty following` lists those you follow, "
                + "`loyalty sync --working-set` refreshes the directory of them all"
        case .notFound(.notCached(let catalogPartial)):
            let cause = catalogPartial ? " (the catalog is incomplete: a sync stopped midway)" : ""
            return "no such offer in the cache\(cause): run `loyalty sync`, then `loyalty offers` to list them"
        case .issuedElsewhere(let credential, let issuer, let server):
            let what = credential == .deviceToken ? "this device's token" : "the retailer API key in the config"
            return "\(what) was issued by \(issuer), not \(server), so it was not sent. If that server has moved to \(server), run `loyalty config set server \(server) --move-credentials`; to use another server's account, set LOYALTY_HOME to another folder"
        case .plainHTTP(let server):
            return "'\(server)' is plain http to another machine: anyone on the network between could read tokens and keys. Use https:// (with --ca-file for a private CA), or opt in with --insecure-http or LOYALTY_INSECURE_HTTP=1"
        case .untrustedCertificate(let server, let detail):
            return "the certificate of \(server) is not trusted (\(detail)), so nothing was sent: if the server's certificate comes from a private CA, give the CA's certificate with --ca-file, LOYALTY_CA_FILE or `loyalty config set ca_file PEM`"
        case .configuration, .io, .network, .server, .protocolViolation, .unavailable:
            return message ?? ""
        }
    }
}

extension ClientError.Refusal {
    /// Which credential to fix, and how.
    var words: String {
        switch self {
        case .none:
            "the server asked for credentials"
        case .device:
            "this device was revoked, its token is unknown, or its account was deleted: run `loyalty account link` on a device that is still signed in, then `loyalty account link --replace CODE` here (after a deletion, `loyalty account create` starts afresh)"
        case .retailer:
            "the retailer API key was refused (rotated or revoked?): put the current key in the config, or register again with `loyalty retailer register`"
        case .till:
            "the till key was refused (revoked?): ask the retailer for a new one (`loyalty retailer till-key create`)"
        case .operator:
            "the operator token was refused: set LOYALTY_ADMIN_TOKEN to the server's admin token (loyalty-server prints where it keeps it)"
        case .retailerKeyVariable:
            "LOYALTY_RETAILER_KEY holds a space, a line break or another character no key has: set it to the key alone"
        }
    }
}
