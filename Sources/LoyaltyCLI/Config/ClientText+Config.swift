import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// What `config show` prints, and how a server setting is named wherever it is shown.
extension ClientText {
    /// `config show`.
    static func config(_ shown: ConfigShown) -> String {
        let config = shown.config
        let problem = shown.serverProblem.map { "; \($0.description)" } ?? ""
        let retailer =
            config.retailer.map {
                "\(TerminalText.escaped($0.name)), beacons \($0.uuid.uuidString) (API key saved: `loyalty retailer key show` prints it)"
            } ?? "-"
        func seconds(_ value: Double?, default fallback: Int) -> String {
            value.map { String(format1: $0) } ?? "\(fallback) (default)"
        }
        return """
            file               \(shown.file)
            server             \(serverInUse(shown.server.text, shown.server.source, saved: config.server, problem: problem))
            connect_timeout_s  \(seconds(config.connectTimeoutSeconds, default: 5))
            total_timeout_s    \(seconds(config.totalTimeoutSeconds, default: 30))
            retailer           \(retailer)
            """
    }

    /// The server in use and where it was given, with the config's when another wins over it:
    /// `http://a:1 (from LOYALTY_SERVER; saved: http://b:2)`.
    static func serverInUse(
        _ server: String, _ source: ClientConfig.ServerSource, saved: String?, problem: String = ""
    ) -> String {
        let given =
            switch source {
            case .flag: "from --server"
            case .environment: "from LOYALTY_SERVER"
            case .config: "from the config"
            case .default: "the default"
            }
        let overridden = saved.flatMap { source == .config || $0 == server ? nil : "; saved: \($0)" } ?? ""
        return TerminalText.escaped("\(server) (\(given)\(overridden)\(problem))")
    }
}
