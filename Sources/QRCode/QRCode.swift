internal import CQREncode

/// A QR code symbol (ISO/IEC 18004), made by libqrencode: the only code that touches it.
public struct QRCode: Sendable, Equatable {
    /// Modules per side, without the quiet zone.
    public let width: Int
    /// Row-major, `true` for a dark module.
    public let modules: [Bool]

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Empty text, a NUL, or more than the largest symbol holds.
        case cannotEncode(String)

        public var description: String {
            switch self {
            case .cannotEncode(let reason): "cannot make a QR code: \(reason)"
            }
        }
    }

    /// `text` at error correction level M (15% of the symbol may be damaged), the smallest version that holds
    /// it. Upper-case letters and digits encode in alphanumeric mode, as a redemption code does.
    public init(_ text: String) throws(Failure) {
        guard !text.isEmpty, !text.utf8.contains(0) else {
            throw .cannotEncode("the text is empty or holds a NUL")
        }
        guard let symbol = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            throw .cannotEncode("\(text.utf8.count) bytes are more than a QR code holds")
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        self.width = width
        // Bit 0 of each byte is the module's colour; the other bits say what the module is for.
        modules = (0..<width * width).map { symbol.pointee.data[$0] & 1 == 1 }
    }

    public func isDark(row: Int, column: Int) -> Bool {
        guard (0..<width).contains(row), (0..<width).contains(column) else { return false }
        return modules[row * width + column]
    }

    /// The symbol for a terminal, two module rows a line in half blocks, with the four-module quiet zone
    /// scanners need. Light modules are drawn in the text colour and dark ones left as background, as
    /// `qrencode -t UTF8` does: dark on light on the usual light-on-dark terminal.
    public func terminalLines(quietZone: Int = 4) -> [String] {
        let span = -quietZone..<(width + quietZone)
        return stride(from: -quietZone, to: width + quietZone, by: 2).map { top in
            String(
                span.map { column -> Character in
                    switch (isDark(row: top, column: column), isDark(row: top + 1, column: column)) {
                    case (false, false): "\u{2588}"
                    case (false, true): "\u{2580}"
                    case (true, false): "\u{2584}"
                    case (true, true): " "
                    }
                })
        }
    }

    /// `terminalLines` with `text` to its right, a line of text per line of the symbol from the top (the
    /// caller makes the text safe for a terminal; this adds nothing but spaces).
    public func terminalLines(beside text: [String], gap: Int = 2) -> [String] {
        let symbol = terminalLines()
        let blank = String(repeating: " ", count: symbol.first?.count ?? 0)
        return (0..<max(symbol.count, text.count)).map { index in
            let left = index < symbol.count ? symbol[index] : blank
            guard index < text.count else { return left }
            return left + String(repeating: " ", count: gap) + text[index]
        }
    }
}
