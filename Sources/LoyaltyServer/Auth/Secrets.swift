import Digest
import Foundation
import LoyaltyAPI

/// Random secrets and their digests. A secret is shown once; only `digest(of:)` is stored, and lookups
/// are by digest, so a database dump does not hold usable credentials.
public enum Secrets {
    /// `count` bytes from the kernel's CSPRNG: on Linux the standard library's system generator is
    /// getrandom(2) (Glibc's module map does not export <sys/random.h>).
    /// Eight bytes per call: the generator makes one system call per value, whatever its width.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }

    /// `prefix` followed by 32 random bytes in unpadded base64url, e.g. `lk_3q2-...`.
    public static func token(prefix: String) -> String {
        prefix + base64URL(randomBytes(32))
    }

    /// Letters and digits a person reads aloud without confusion (no 0/O, 1/I/L).
    private static let codeAlphabet = RedemptionCode.alphabet

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
        SHA256.hash(secret.utf8)
    }

    /// Equal length and bytes, taking the same time wherever the first difference is.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    /// Unpadded base64url (RFC 4648 section 5): safe in headers, URLs and file names. Coded by hand: it runs
    /// for every request (its id) and every device token, where Foundation's coder and three string
    /// replacements cost more than the rest of a 304.
    static func base64URL(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group = 0
            for (offset, byte) in chunk.enumerated() { group |= Int(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { text.append(base64URLAlphabet[(group >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// nil unless `text` is unpadded base64url whose unused trailing bits are zero, so each byte string
    /// has exactly one text.
    static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8(decodeBase64URL(symbols:))
    }

    /// Every request decodes its device token's account (twice): through the buffers, without bounds checks.
    static func decodeBase64URL(symbols: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard symbols.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(symbols.count * 3 / 4)
        var group = 0
        var bits = 0
        let valid = base64URLValues.withUnsafeBufferPointer { values in
            for symbol in symbols {
                let value = values[Int(symbol)]
                guard value >= 0 else { return false }
                group = (group << 6) | Int(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    bytes.append(UInt8(truncatingIfNeeded: group >> bits))
                    group &= (1 << bits) - 1
                }
            }
            return true
        }
        return valid && group == 0 ? bytes : nil
    }

    private static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each byte's value in the alphabet, or -1.
    private static let base64URLValues: [Int8] = {
        var values = [Int8](repeating: -1, count: 256)
        for (value, symbol) in base64URLAlphabet.enumerated() { values[Int(symbol)] = Int8(value) }
        return values
    }()
}
