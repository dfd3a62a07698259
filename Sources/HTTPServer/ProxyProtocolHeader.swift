/// The PROXY protocol version 2 header (haproxy's doc/proxy-protocol.txt, section 2.2) that a balancer with
/// `send-proxy-v2` writes before a connection's first byte: the address of the client it accepted. Version 1,
/// the text form, is refused: a listener takes one version, never guessing.
public struct ProxyProtocolHeader: Equatable, Sendable {
    public static let signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// Signature, version and command, family and transport, and the length of the rest.
    public static let fixedLength = 16
    /// Addresses take at most 216 bytes (two Unix paths); the rest is TLVs (HAProxy's are tens of bytes). A
    /// longer header is refused rather than buffered.
    public static let maxLength = 1024

    /// The client and its port as the balancer saw them; nil for a LOCAL connection (the balancer's own, such as
    /// a health check) and for a family that is not IP: the connection's own address stands.
    public let source: Endpoint?
    /// How many bytes the header took.
    public let length: Int

    public struct Endpoint: Equatable, Sendable {
        public let address: IPAddress
        public let port: UInt16
    }

    /// The whole header's length, from its first `fixedLength` bytes (`bytes` may hold more).
    public static func length(ofHeaderStartingWith bytes: [UInt8]) throws(ProxyProtocolError) -> Int {
        let prefix = Array(bytes.prefix(fixedLength))
        let signed = prefix.prefix(signature.count)
        guard signed.elementsEqual(signature.prefix(signed.count)) else {
            throw prefix.starts(with: Array("PROXY ".utf8).prefix(prefix.count)) ? .version1 : .noSignature
        }
        guard prefix.count == fixedLength else { throw .truncated(received: prefix.count, needed: fixedLength) }
        guard prefix[12] >> 4 == 2 else { throw .unsupportedVersion(prefix[12] >> 4) }
        let length = fixedLength + Int(prefix[14]) << 8 + Int(prefix[15])
        guard length <= maxLength else { throw .tooLong(length) }
        return length
    }

    /// The header at the start of `bytes`; what follows it (the client's first request) is left alone.
    public init(parsing bytes: [UInt8]) throws(ProxyProtocolError) {
        let length = try Self.length(ofHeaderStartingWith: bytes)
        guard bytes.count >= length else { throw .truncated(received: bytes.count, needed: length) }
        let command = bytes[12] & 0x0F
        let family = bytes[13] >> 4
        let transport = bytes[13] & 0x0F
        let addresses = bytes[Self.fixedLength..<length]
        self.length = length
        switch command {
        case 0x0:  // LOCAL: the addresses, if any, are to be ignored.
            source = nil
            return
        case 0x1:  // PROXY
            break
        default:
            throw .unsupportedCommand(command)
        }
        guard transport <= 2 else { throw .unsupportedTransport(transport) }
        let addressLength: Int
        switch family {
        case 0x0: addressLength = 0  // UNSPEC: no addresses
        case 0x1: addressLength = 2 * 4 + 2 * 2
        case 0x2: addressLength = 2 * 16 + 2 * 2
        case 0x3: addressLength = 2 * 108  // Unix paths
        default: throw .unsupportedFamily(family)
        }
        guard addresses.count >= addressLength else {
            throw .addressesTooShort(family: family, length: addresses.count, needed: addressLength)
        }
        guard family == 0x1 || family == 0x2 else {
            source = nil
            return
        }
        guard transport == 0x1 else { throw .unsupportedTransport(transport) }
        let size = family == 0x1 ? 4 : 16
        let start = addresses.startIndex
        let portAt = start + 2 * size
        guard let address = IPAddress(bytes: Array(addresses[start..<start + size])) else {
            throw .unsupportedFamily(family)
        }
        source = Endpoint(address: address, port: UInt16(addresses[portAt]) << 8 | UInt16(addresses[portAt + 1]))
    }
}

public enum ProxyProtocolError: Error, Equatable, CustomStringConvertible {
    /// The connection does not start with the version 2 signature (a client speaking HTTP straight away).
    case noSignature
    /// The text header of version 1 (`send-proxy`).
    case version1
    case unsupportedVersion(UInt8)
    case unsupportedCommand(UInt8)
    case unsupportedFamily(UInt8)
    case unsupportedTransport(UInt8)
    /// The length field leaves less room than the family's addresses take.
    case addressesTooShort(family: UInt8, length: Int, needed: Int)
    case tooLong(Int)
    /// The connection ended (or the deadline came) after `received` bytes of a header that takes `needed`.
    case truncated(received: Int, needed: Int)

    public var description: String {
        switch self {
        case .noSignature:
            "the connection does not begin with a PROXY protocol v2 header (the balancer needs send-proxy-v2)"
        case .version1: "PROXY protocol v1 (send-proxy) is not accepted; use send-proxy-v2"
        case .unsupportedVersion(let version): "PROXY protocol version \(version) is not supported (only 2)"
        case .unsupportedCommand(let command): "PROXY header command \(command) is neither LOCAL (0) nor PROXY (1)"
        case .unsupportedFamily(let family): "PROXY header address family \(family) is not one of 0 to 3"
        case .unsupportedTransport(let transport):
            "PROXY header transport \(transport) is not a stream (TCP): this is an HTTP listener"
        case .addressesTooShort(let family, let length, let needed):
            "PROXY header of family \(family) has \(length) bytes of addresses; it needs \(needed)"
        case .tooLong(let length):
            "PROXY header of \(length) bytes is over the limit of \(ProxyProtocolHeader.maxLength)"
        case .truncated(let received, let needed): "PROXY header ended after \(received) of its \(needed) bytes"
        }
    }
}
