import Arguments
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

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

/// Whether standard output is a terminal: tables and progress there, JSON lines in pipes.
var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

/// A number of seconds greater than zero.
let positiveSeconds: @Sendable (String) -> Double? = { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } }

/// Prints one JSON object per line.
func printJSONLine(_ fields: [(String, JSONValue)]) {
    printOut(JSONValue.object(fields).text)
}
