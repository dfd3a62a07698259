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
    /// one, reduced to its confusable skeleton (UTS #39: "Matey’s" and a Cyrillic "Mаtey's" read as "Matey's") in
    /// lower case. Skeleton and lower case are taken until neither changes the key: a prototype's lower case may
    /// have a prototype of its own ("0" is "O", whose lower case is "o"). migrations/0010 made the keys of the
    /// names before it so.
    static func readingKey(_ name: String) -> String {
        var spaced = String.UnicodeScalarView()
        for scalar in folded(name).unicodeScalars {
            if scalar.properties.isWhitespace {
                if spaced.last != " " { spaced.append(" ") }
            } else if !RetailerRegistration.isInvisible(scalar) {
                spaced.append(scalar)
            }
        }
        var key = String(spaced)
        for _ in 0..<4 {
            let next = skeleton(key.lowercased()).lowercased()
            if next == key { break }
            key = next
        }
        return key
    }

    /// UTS #39 section 4: NFD, without default-ignorable code points, each code point as its prototype, NFD again.
    static func skeleton(_ text: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars
        where !scalar.properties.isDefaultIgnorableCodePoint {
            if let prototype = prototypes[scalar.value] { mapped.append(contentsOf: prototype) } else { mapped.append(scalar) }
        }
        return String(mapped).decomposedStringWithCanonicalMapping
    }

    /// Resources/confusables.txt (scripts/confusables.py made it from Unicode's confusables.txt): `SOURCE;PROTOTYPE`
    /// in hex, a line each.
    private static let prototypes: [UInt32: [Unicode.Scalar]] = {
        var table: [UInt32: [Unicode.Scalar]] = [:]
        for line in String(decoding: PackageResources.confusables_txt, as: UTF8.self).split(separator: "\n")
        where !line.hasPrefix("#") {
            let fields = line.split(separator: ";")
            guard fields.count == 2, let source = UInt32(fields[0], radix: 16) else { continue }
            table[source] = fields[1].split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
        }
        return table
    }()
}
