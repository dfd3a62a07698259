import Foundation

/// Who may say which client a connection or request is for. Behind a balancer every connection comes from the
/// balancer: only a peer in `trustedProxies` may name another client, by a PROXY protocol v2 header
/// (`requiresProxyProtocol`) or by `X-Forwarded-For`; anyone else is the client it connects from.
public struct ClientAddressPolicy: Equatable, Sendable {
    public var trustedProxies: [IPAddressRange]
    /// Every connection must come from a trusted proxy and begin with a PROXY v2 header, whose source address
    /// becomes the connection's: libmicrohttpd's per-address connection cap, the rate limits and the logs all
    /// see the client. Connections from anyone else are closed unread.
    public var requiresProxyProtocol: Bool

    public init(trustedProxies: [IPAddressRange] = [], requiresProxyProtocol: Bool = false) {
        self.trustedProxies = trustedProxies
        self.requiresProxyProtocol = requiresProxyProtocol
    }

    public func isTrusted(_ address: IPAddress) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// The client of a request from `peer` with `X-Forwarded-For: forwardedFor` (repeated headers joined by
    /// commas): from a trusted peer, the right-most address in the list that is not itself a trusted proxy
    /// (each proxy appends the address it got the request from, so entries left of an untrusted one are the
    /// client's to invent). An entry that is not an address ends the walk at the proxy that added it.
    /// `ignoredForwarding` is true when an untrusted peer sent the header.
    public func client(peer: String, forwardedFor: String?) -> (address: String, ignoredForwarding: Bool) {
        guard let forwardedFor else { return (peer, false) }
        guard let peerAddress = IPAddress(peer), isTrusted(peerAddress) else { return (peer, true) }
        var client = peerAddress
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let address = IPAddress(entry.trimmingCharacters(in: .whitespaces)) else { break }
            client = address
            if !isTrusted(address) { break }
        }
        return (client.description, false)
    }
}
