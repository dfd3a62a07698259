import Foundation
import LoyaltyCLI
import LoyaltyTesting

/// How a test runs `loyalty`: the command tree in process, writing to a capturing sink, or the built binary
/// through pipes (as TestServer's transports do for the server). The same test body runs with each, so what
/// is checked in process is also checked against the real program.
enum LoyaltyRun: String, CaseIterable, CustomStringConvertible, Sendable {
    case inProcess
    case binary

    var description: String { rawValue }

    /// Runs `loyalty ARGUMENTS` with this process's environment, a scratch home and no server unless
    /// `environment` says otherwise; standard output is never a terminal.
    func callAsFunction(_ arguments: [String], environment: [String: String] = [:]) throws -> Binary.Result {
        switch self {
        case .binary:
            return try Binary("loyalty").run(arguments, environment: environment)
        case .inProcess:
            return Self.inProcess(arguments, environment: environment, sink: .capturing())
        }
    }

    /// `loyalty ARGUMENTS` in process, writing to `sink` (a terminal with scripted keys, say), with an
    /// interruption of its own: q in one run must not end the next, and signals stay the test process's.
    static func inProcess(_ arguments: [String], environment: [String: String], sink: OutputSink) -> Binary.Result {
        let scratch = ["LOYALTY_HOME": scratchHome.path, "LOYALTY_SERVER": "http://127.0.0.1:9"]
        let status = LoyaltyCommand.run(
            arguments, sink: sink,
            environment: ProcessInfo.processInfo.environment.merging(scratch) { $1 }.merging(environment) { $1 },
            interruption: Interruption(signals: []))
        return Binary.Result(status: status, stdout: sink.output, stderr: sink.error)
    }
}

/// `Tests/Fixtures`: the captures and vectors, with their licences, in the repository.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")
