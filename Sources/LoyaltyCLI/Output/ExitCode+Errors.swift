import Arguments
import BeaconRadio
import Beacons
import LoyaltyClient

/// Every exit status `loyalty` has, here and only here: the help text that lists them, and which status
/// each kind of error a command lets through exits with (`Arguments` runs a `CommandError` with its code).
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
          77  permission denied (token revoked, wrong or another server's, missing capabilities)
        """
}

extension ClientError: CommandError {
    public var exitCode: Int32 {
        switch self {
        case .network: ExitCode.tempFailure
        case .unauthorized, .issuedElsewhere: ExitCode.noPermission
        case .plainHTTP: ExitCode.usage
        case .server(let status, _, _): status >= 500 ? ExitCode.tempFailure : ExitCode.failure
        case .protocolViolation, .unavailable, .untrustedCertificate: ExitCode.unavailable
        case .corruptCache, .io: ExitCode.ioError
        case .configuration, .notRegistered, .alreadyInAccount, .notFound: ExitCode.failure
        }
    }
}

extension PositionSourceError: CommandError {
    public var exitCode: Int32 { if case .unreadableLog = self { ExitCode.ioError } else { ExitCode.unavailable } }
}

extension CombinedScan.ReplayError: CommandError {
    public var exitCode: Int32 {
        switch self {
        case .unreadable(_, let error): error.exitCode
        case .damaged: ExitCode.dataError
        }
    }
}

extension BTSnoopError: CommandError {
    /// 74 for a capture that cannot be opened or read (missing, a directory), 65 for one that is not a capture.
    public var exitCode: Int32 {
        switch reason {
        case .openFailed, .readFailed: ExitCode.ioError
        default: ExitCode.dataError
        }
    }
}

extension RadioError: CommandError {
    /// Missing capabilities or a bus refusing this user exit 77, a stream that is not H4 65, every other radio
    /// problem 69.
    public var exitCode: Int32 {
        switch self {
        case .missingCapabilities, .busRefusesUser: ExitCode.noPermission
        case .framingLost: ExitCode.dataError
        default: ExitCode.unavailable
        }
    }
}
