internal import CMicroHTTPD
import Foundation

// Reading a request's headers from MHD: those that frame its body, and all of them for the handler.

/// The headers that say where a request's body ends and which host it is for, and whether a header's name or value
/// hides something (a NUL, whitespace before the colon) that would make MHD read it otherwise than a proxy would.
struct FramingHeaders {
    var contentLengths: [String] = []
    var transferEncodings: [String] = []
    var hosts: [String] = []
    /// The first header name that is not an RFC 9110 token: MHD 0.9.75 keeps the whitespace before a colon in the
    /// name, so "Content-Length : 5" reached it as a header named "Content-Length " that frames nothing.
    var nameNotAToken: String?
    var hasNUL: Bool
    /// Only HTTP/1.0 may leave Host out (RFC 9112 section 3.2).
    var requiresHost: Bool

    /// `method` as the access handler got it: MHD's pointer to the start of the request's head.
    init(of connection: OpaquePointer, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) {
        hasNUL = loyalty_MHD_header_value_has_NUL(connection, method) != 0
        requiresHost = version.map { strcmp($0, "HTTP/1.0") != 0 } ?? true
        _ = withUnsafeMutablePointer(to: &self) { pointer in
            MHD_get_connection_values(
                connection, .HEADER_KIND,
                { pointer, _, key, value in
                    guard let pointer, let key else { return MHD_Result.YES }
                    let framing = pointer.assumingMemoryBound(to: FramingHeaders.self)
                    // Names compared where MHD holds them: the other headers' values are not copied here.
                    let text = { value.map { String(cString: $0) } ?? "" }
                    if strcasecmp(key, "content-length") == 0 { framing.pointee.contentLengths.append(text()) }
                    if strcasecmp(key, "transfer-encoding") == 0 { framing.pointee.transferEncodings.append(text()) }
                    if strcasecmp(key, "host") == 0 { framing.pointee.hosts.append(text()) }
                    if framing.pointee.nameNotAToken == nil, !isToken(key) {
                        framing.pointee.nameNotAToken = String(cString: key)
                    }
                    return MHD_Result.YES
                }, pointer)
        }
    }

    /// Why the request must be refused, if it must.
    var problem: String? {
        if hasNUL { return "a header value holds a NUL byte (or goes on over a folded line)" }
        if let name = nameNotAToken {
            return name.last == " " || name.last == "\t"
                ? "the header \"\(name.trimmingOptionalWhitespace)\" has whitespace before its colon"
                : "a header's name is not a token (RFC 9110 section 5.1)"
        }
        if hosts.isEmpty && requiresHost { return "an HTTP/1.1 request needs a Host header; there is no Host header" }
        if hosts.count > 1 { return "Host is given \(hosts.count) times" }
        if let host = hosts.first, !host.utf8.allSatisfy(Self.isHostByte) { return "the Host header is not a host" }
        if !transferEncodings.isEmpty && !contentLengths.isEmpty {
            return "both Content-Length and Transfer-Encoding are present"
        }
        if contentLengths.count > 1 { return "Content-Length is given \(contentLengths.count) times" }
        if !transferEncodings.isEmpty,
            transferEncodings.joined(separator: ",").lowercased().trimmingCharacters(in: .whitespaces) != "chunked"
        {
            return "Transfer-Encoding must be chunked, alone"
        }
        return nil
    }

    /// A byte of RFC 3986's host and port: unreserved, percent-encoded, sub-delims, ':' and an IPv6 literal's brackets.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "-._~%!$&'()*+,;=:[]".utf8.contains(byte)
        }
    }
}

/// Whether `name` is an RFC 9110 token: one or more of its tchar.
private func isToken(_ name: UnsafePointer<CChar>) -> Bool {
    var byte = name
    guard byte.pointee != 0 else { return false }
    while byte.pointee != 0 {
        let value = UInt8(bitPattern: byte.pointee)
        switch value {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            break
        default: guard "!#$%&'*+-.^_`|~".utf8.contains(value) else { return false }
        }
        byte += 1
    }
    return true
}

func values(of connection: OpaquePointer, _ kind: MHD_ValueKind, lowercasingNames: Bool)
    -> [String: String]
{
    // Sized for all of them first (MHD counts them without a callback): growing a dictionary rehashes it.
    let count = MHD_get_connection_values(connection, kind, nil, nil)
    guard count > 0 else { return [:] }
    var collected: (values: [String: String], lowercasingNames: Bool) = (
        .init(minimumCapacity: Int(count)), lowercasingNames
    )
    _ = withUnsafeMutablePointer(to: &collected) { collectedPointer in
        MHD_get_connection_values(
            connection, kind,
            { pointer, _, key, value in
                guard let pointer, let key else { return MHD_Result.YES }
                let collected = pointer.assumingMemoryBound(
                    to: (values: [String: String], lowercasingNames: Bool).self)
                let name = collected.pointee.lowercasingNames ? lowercasedName(key) : String(cString: key)
                let value = value.map { String(cString: $0) } ?? ""
                if !collected.pointee.lowercasingNames {
                    collected.pointee.values[name] = value
                } else if let earlier = collected.pointee.values.updateValue(value, forKey: name) {
                    collected.pointee.values[name] = earlier + ", " + value
                }
                return MHD_Result.YES
            }, collectedPointer)
    }
    return collected.values
}

/// A header's name with its ASCII letters lower-cased, made in one pass over its bytes: a name is an RFC 9110
/// token, ASCII, and `lowercased()` cost more than the rest of the header.
func lowercasedName(_ name: UnsafePointer<CChar>) -> String {
    let length = strlen(name)
    return name.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        String(unsafeUninitializedCapacity: length) { buffer in
            for index in 0..<length {
                let byte = bytes[index]
                buffer[index] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            }
            return length
        }
    }
}
