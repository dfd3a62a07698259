/// The release that `loyalty --version` and `loyalty-server --version` report. It lives here because
/// `LoyaltyAPI` is the one module the client and the server both import: the two can never disagree.
public enum Release {
    public static let version = "0.8.0"
}
