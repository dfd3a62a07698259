internal import CMicroHTTPD
import Foundation

// Reading a request's headers from MHD: those that frame its body, and all of them for the handler.

/// The headers that say where a request's body ends, and whether a header value hides a NUL.
struct FramingHeaders {
    var contentLengths: [String] = []
    var transferEncodings: [String] = []
    var hasNUL: Bool

    /// `method` as the access handler got it: MHD's pointer to the start of the request's head.
    init(of connection: OpaquePointer, method: UnsafePointer<CChar>?) {
        hasNUL = loyalty_MHD_header_value_has_NUL(connection, method) != 0
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
                    return MHD_Result.YES
                }, pointer)
        }
    }

    /// Why the request must be refused, if it must.
    var problem: String? {
        if hasNUL { return "a header value holds a NUL byte (or goes on over a folded line)" }
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
