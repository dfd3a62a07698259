import Foundation

/// An IPv4 or IPv6 address. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket shows an
/// IPv4 peer) is kept as the IPv4 address, so it matches IPv4 ranges and reads as the client wrote it.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        if bytes.count == 16, bytes[..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.bytes = Array(bytes[12...])
        } else if bytes.count == 4 || bytes.count == 16 {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    /// `192.0.2.1`, `2001:db8::1` or `[2001:db8::1]`; nil for anything else (names, ports, zones).
    public init?(_ text: String) {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        if inet_pton(AF_INET, bare, &ipv4) == 1 {
            self.init(bytes: withUnsafeBytes(of: &ipv4) { Array($0) })
        } else if inet_pton(AF_INET6, bare, &ipv6) == 1 {
            self.init(bytes: withUnsafeBytes(of: &ipv6) { Array($0) })
        } else {
            return nil
        }
    }

    /// The address of an `AF_INET` or `AF_INET6` socket address; nil for other families.
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let raw = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            self.init(bytes: withUnsafeBytes(of: raw) { Array($0) })
        case AF_INET6:
            let raw = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            self.init(bytes: withUnsafeBytes(of: raw) { Array($0) })
        default:
            return nil
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The socket address of this address and `port`, for handing a connection to libmicrohttpd.
    func socketAddress(port: UInt16) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { pointer in
            if isIPv4 {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    address.pointee.sin_family = sa_family_t(AF_INET)
                    address.pointee.sin_port = port.bigEndian
                    withUnsafeMutableBytes(of: &address.pointee.sin_addr) { $0.copyBytes(from: bytes) }
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    address.pointee.sin6_family = sa_family_t(AF_INET6)
                    address.pointee.sin6_port = port.bigEndian
                    withUnsafeMutableBytes(of: &address.pointee.sin6_addr) { $0.copyBytes(from: bytes) }
                }
            }
        }
        return storage
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`); a bare address is a block of one.
public struct IPAddressRange: Hashable, Sendable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public static let expected = "an address or CIDR block, e.g. 10.0.0.5, 10.0.0.0/24 or 2001:db8::/64"

    /// Nil for text that is not an address with an optional `/PREFIX` within the address's bits, or whose
    /// address has bits set past the prefix (`10.0.0.1/8` is a typing error more often than a choice).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let bits = address.bytes.count * 8
        let prefixLength: Int
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isASCII) else {
                return nil
            }
            prefixLength = given
        } else {
            prefixLength = bits
        }
        guard Self.masked(address.bytes, to: prefixLength) == address.bytes else { return nil }
        (network, self.prefixLength) = (address, prefixLength)
    }

    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, to: prefixLength) == network.bytes
    }

    public var description: String { "\(network)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], to prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, prefixLength - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}

/// The length of the `AF_INET` or `AF_INET6` address `storage` holds, as bind, accept and MHD take it.
func socketAddressLength(_ storage: sockaddr_storage) -> socklen_t {
    socklen_t(
        storage.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
}
