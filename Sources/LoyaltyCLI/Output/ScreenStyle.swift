import Beacons
import Foundation

/// `--color`: when the scan's screen is coloured, as GNU tools take it.
enum ColorChoice: String, Sendable {
    /// On a terminal whose TERM is set and not `dumb`, unless NO_COLOR is set and not empty.
    case auto
    /// Also in a pipe, and despite NO_COLOR (an option given is the shopper's latest word, as no-color.org has it).
    case always
    case never
}

/// The colours of the shopper's screen, as SGR sequences, or none at all. The one place that says which
/// colour means what: proximity in the hot/cold finder's colours, an offer's banner in its category's.
struct ScreenStyle: Sendable, Equatable {
    let colored: Bool

    static let plain = ScreenStyle(colored: false)
    static let colors = ScreenStyle(colored: true)

    init(colored: Bool) { self.colored = colored }

    init(_ choice: ColorChoice, standardOutputIsTerminal: Bool, environment: [String: String]) {
        switch choice {
        case .always: colored = true
        case .never: colored = false
        case .auto:
            let term = environment["TERM"] ?? ""
            colored = standardOutputIsTerminal && !term.isEmpty && term != "dumb" && (environment["NO_COLOR"] ?? "").isEmpty
        }
    }

    /// `text` in the colour of `proximity`: immediate red (hot), near orange, far blue (cold), unknown dim.
    func proximity(_ text: String, _ proximity: Proximity) -> String {
        let code =
            switch proximity {
            case .immediate: "91"
            case .near: "38;5;208"
            case .far: "94"
            case .unknown: "2"
            }
        return painted(text, code)
    }

    /// A line of an offer's banner, on its category's colour.
    func banner(_ text: String, _ color: BannerColor) -> String { painted(text, color.code) }

    private func painted(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}

/// The colour an offer's banner is shown on, by the offer's category (`retailer offer set --category`): food
/// on blue and clothing on red, as the offers app of the iOS guides shows them; any other category, or none,
/// on a neutral grey. Categories match whatever their case and surrounding spaces. README and loyalty(1)
/// list this table.
enum BannerColor: String, Sendable {
    case blue, red, neutral

    static let byCategory: [String: BannerColor] = ["food": .blue, "clothing": .red]

    init(category: String?) {
        let key = category?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        self = Self.byCategory[key] ?? .neutral
    }

    /// Bright white on blue or red; black on light grey.
    fileprivate var code: String {
        switch self {
        case .blue: "1;97;44"
        case .red: "1;97;41"
        case .neutral: "1;30;47"
        }
    }
}
