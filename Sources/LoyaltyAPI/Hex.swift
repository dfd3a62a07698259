/// Bytes as lower-case hex digits, as the wire carries keys and ephemeral identifiers.
public enum Hex {
    public static func text(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of an even number of hex digits (either case); nil for anything else.
    public static func bytes(_ text: String) -> [UInt8]? {
        let symbols = Array(text.utf8)
        guard symbols.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(symbols.count / 2)
        for index in stride(from: 0, to: symbols.count, by: 2) {
            guard let high = value(symbols[index]), let low = value(symbols[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(_ symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): symbol - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): symbol - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): symbol - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
