import Foundation

/// Random secrets and their digests. A secret is shown once; only `digest(of:)` is stored, and lookups
/// are by digest, so a database dump does not hold usable credentials.
enum Secrets {
    /// `count` bytes from the kernel's CSPRNG: on Linux the standard library's system generator is
    /// getrandom(2) (Glibc's module map does not export <sys/random.h>).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in generator.next() }
    }

    /// `prefix` followed by 32 random bytes in unpadded base64url, e.g. `lk_3q2-...`.
    static func token(prefix: String) -> String {
        prefix + base64URL(randomBytes(32))
    }

    /// Letters and digits a person reads aloud without confusion (no 0/O, 1/I/L).
    private static let codeAlphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")

    /// A code a person types, e.g. `K7M2Q9XP`: `length` symbols of log2(31) ≈ 4.95 bits each.
    static func humanCode(length: Int) -> String {
        // 248 is the largest multiple of 31 below 256: rejecting above it keeps the choice uniform.
        var code = ""
        while code.count < length {
            for byte in randomBytes(length * 2) where byte < 248 && code.count < length {
                code.append(codeAlphabet[Int(byte) % codeAlphabet.count])
            }
        }
        return code
    }

    static func digest(of secret: String) -> [UInt8] {
        SHA256.hash(Array(secret.utf8))
    }

    /// Equal length and bytes, taking the same time wherever the first difference is.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    /// Unpadded base64url (RFC 4648 section 5): safe in headers, URLs and file names.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}
