import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server as a credential knows it: scheme, host and port (RFC 6454's origin). A device token or an API key
/// is sent only to the origin that issued it; `http://127.0.0.1:8080` and `http://localhost:8080` are two.
public struct ServerOrigin: Sendable, Hashable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int

    /// The origin of an http or https URL with a host (nil for anything else). The port defaults to the
    /// scheme's (80, 443), so `https://example.com` and `https://example.com:443` are one.
    public init?(_ url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.percentEncodedHost, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// As written in the state files: `scheme://host:port`.
    public var description: String { "\(scheme)://\(host):\(port)" }

    /// This machine, by name or address: localhost, 127.0.0.0/8, ::1. Only these may be spoken to in plain
    /// http without the user's say-so: anywhere else, anyone on the way reads the tokens. Written exactly
    /// (no `127.1`, no IPv4-mapped form): anything else counts as remote, which only ever refuses more.
    public var isLoopback: Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, bare, &ipv4) == 1 { return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 }
        var ipv6 = in6_addr()
        return inet_pton(AF_INET6, bare, &ipv6) == 1 && withUnsafeBytes(of: &ipv6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }
}

extension ServerOrigin: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let url = URL(string: text), let origin = ServerOrigin(url) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "'\(text)' is not a server"))
        }
        self = origin
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
