import Foundation
import LoyaltyAPI

/// A retailer's name as shoppers read it: they pick a retailer by name, so no two may read alike.
enum RetailerName {
    /// The name as stored and shown: compatibility forms (full-width letters, ligatures, circled digits) as
    /// their plain characters (NFKC), without leading or trailing spaces and invisible characters.
    static func folded(_ name: String) -> String {
        let scalars = name.precomposedStringWithCompatibilityMapping.unicodeScalars
        let visible = { (scalar: Unicode.Scalar) in !RetailerRegistration.isInvisible(scalar) }
        guard let first = scalars.firstIndex(where: visible), let last = scalars.lastIndex(where: visible) else {
            return ""
        }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// What two names that read alike share: the folded name without invisible characters, each run of spaces as
    /// one, in lower case. migrations/0007 fills it the same way (NFKC, spaces, lower) for the names before it.
    static func readingKey(_ name: String) -> String {
        var key = String.UnicodeScalarView()
        for scalar in folded(name).unicodeScalars {
            if scalar.properties.isWhitespace {
                if key.last != " " { key.append(" ") }
            } else if !RetailerRegistration.isInvisible(scalar) {
                key.append(scalar)
            }
        }
        return String(key).lowercased()
    }
}
