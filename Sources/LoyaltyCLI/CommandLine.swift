import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

extension ExitCode {
    static let helpText = """
        EXIT CODES:
          0   success
          1   the command failed (the message says why)
          64  wrong arguments (see --help)
          65  malformed input data (hex, packet, capture file)
          69  a service or the radio is unavailable
          74  a file could not be read or written
          75  temporary failure: the network or server; retry later
          77  permission denied (token revoked or wrong, missing capabilities)
        """
}

/// `--name SECONDS`: a number of seconds greater than zero.
func secondsOption(_ name: String, help: String) -> Option<Double> {
    Option(name, value: "SECONDS", help: help, expected: "a number of seconds greater than 0", parse: positiveSeconds)
}

/// A number of seconds greater than zero (`--timeout`, `config set total_timeout_s`), or nil.
@Sendable func positiveSeconds(_ text: String) -> Double? {
    Double(text).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
}

/// `--name UUID`: a proximity UUID.
func uuidOption(_ name: String, help: String, required: Bool = false) -> Option<UUID> {
    Option(name, value: "UUID", help: help, required: required) { text in
        guard let uuid = UUID(uuidString: text) else { throw InvalidValue("not a UUID; expected 8-4-4-4-12 hex digits") }
        return uuid
    }
}
