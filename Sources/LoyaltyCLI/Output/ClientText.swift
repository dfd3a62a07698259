import Arguments
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// `2026-01-31T09:00:00Z`, or `-` for none.
public func timestamp(_ date: Date?) -> String {
    date.map(LoyaltyJSON.formatTimestamp) ?? "-"
}

/// What the client commands print on a terminal (without --json): tables and sentences, as text. Each
/// command family adds its own beside its commands (`Retailer/ClientText+Retailer.swift`); here is what
/// they share.
public enum ClientText {
    /// Rows of text columns, padded to line up, each line ending in a newline, trailing spaces dropped;
    /// text from the server shows its control characters as codes.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        let rows = rows.map { $0.map(TerminalText.escaped) }
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var out = ""
        for row in [header] + rows {
            out +=
                zip(row, widths).map { $0.padding($1) }.joined(separator: "  ")
                .replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }
        return out
    }
}
