import Testing

@testable import LoyaltyClient

@Suite struct TerminalTextTests {
    @Test func everyCharacterATerminalActsOnIsShownAsItsCode() {
        let forged = "Rival deal\u{1B}[2J\u{1B}[31mFAKE: Matey's 90% off\u{1B}[0m\r\nline2\u{07}"
        #expect(
            TerminalText.escaped(forged)
                == #"Rival deal\u001B[2J\u001B[31mFAKE: Matey's 90% off\u001B[0m\u000D\u000Aline2\u0007"#)
        #expect(TerminalText.escaped("c1\u{9B}31m del\u{7F} \u{2028}\u{2029} \u{202E}evil\u{202C} \u{2067}") == #"c1\u009B31m del\u007F \u2028\u2029 \u202Eevil\u202C \u2067"#)
        for text in ["Caf\u{E9}", "\u{1F363} sushi", "\u{5BFF}\u{53F8}", "tab-free", "a\u{200D}b", ""] {
            #expect(TerminalText.escaped(text) == text)
        }
    }
}
