import LoyaltyAPI

/// A link code as the server issues it and as a person types it back.
///
/// Spending a code has no attempt limit (instances share nothing in memory), so its length alone keeps
/// guessing hopeless. Twelve symbols of 31 are 31^12 ≈ 7.9e17 codes (59 bits). With L codes live at once
/// (each lives 10 minutes) and an attacker sending R guesses a second, the first hit is expected after
/// 31^12 / (L × R) seconds: 10,000 live codes and 10,000 guesses a second give about 250 years, and a
/// day of it a chance of 1 in 90,000. The 8 symbols issued before gave 31^8 ≈ 8.5e11: about 2.4 hours.
extension LinkCode {
    static let symbolCount = 12

    /// `symbolCount` random symbols in groups of four for typing, e.g. `K7M2-Q9XP-4HTD`.
    static func random() -> String {
        let symbols = Array(Secrets.humanCode(length: symbolCount))
        return stride(from: 0, to: symbols.count, by: 4)
            .map { String(symbols[$0..<min($0 + 4, symbols.count)]) }.joined(separator: "-")
    }

    /// What is stored and looked up: the digest of the code upper-cased, without its dashes and white
    /// space, so `k7m2 q9xp 4htd` spends `K7M2-Q9XP-4HTD` (and an 8-symbol code issued before spends as it did).
    static func digest(of typed: String) -> [UInt8] {
        Secrets.digest(of: typed.uppercased().filter { $0 != "-" && !$0.isWhitespace })
    }
}
