extension Array where Element == UInt8 {
    /// Bytes from hex as people paste it: a leading `0x`, spaces, colons and dashes are ignored; nil for
    /// anything else that is not a hex digit, or an odd number of digits.
    public init?(pastedHex text: String) {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let nibbles = digits.unicodeScalars.filter { !" :-\t".unicodeScalars.contains($0) }
        guard nibbles.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nibbles.count / 2)
        var high: UInt8? = nil
        for scalar in nibbles {
            guard let value = UInt8(String(scalar), radix: 16) else { return nil }
            if let h = high {
                bytes.append(h << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        self = bytes
    }
}

extension Array where Element == UInt8 {
    /// Two uppercase hex digits a byte, with `separator` between bytes.
    public func hexText(separator: String = "") -> String {
        map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: separator)
    }
}
