import LoyaltyAPI

/// Text from the network made safe to print on a terminal or in a table: every character a terminal acts
/// on (C0 and C1 controls, DEL, the line and paragraph separators, bidirectional controls; the characters
/// `Validation.isRefusedInText` names) is shown as its code, `\u001B`, so an offer can neither clear the
/// screen nor forge a line that looks like another retailer's. JSON output needs none of this: its encoder
/// escapes what JSON requires.
public enum TerminalText {
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Validation.isRefusedInText) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if Validation.isRefusedInText(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
