import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The `loyalty` command tree: the root only configures; `cli/main.swift` runs it.
public enum LoyaltyCommand {
    public static let root = Command(
        name: "loyalty",
        summary: "Proximity loyalty offers from iBeacons, for Linux shoppers and retailers.",
        discussion: ExitCode.helpText,
        // Accepted before the command too (`loyalty --json sync`), by the commands that take them.
        globalOptions: ClientOptions.all,
        subcommands: [
            scanCommand, decodeCommand, doctorCommand, beaconCommand, accountCommand, devicesCommand, syncCommand,
            followCommand, unfollowCommand, followingCommand, offersCommand, historyCommand, redeemCommand,
            retailerCommand, tillCommand, configCommand, muteCommand, unmuteCommand,
        ],
        version: Release.version
    )

    /// Runs `loyalty ARGUMENTS` writing to `sink`, with `environment` as its environment variables, ended
    /// early by `interruption`, and returns the exit code: the binary with the process's own, a test in process
    /// with its own (`Interruption(signals: [])`, which only q requests).
    public static func run(
        _ arguments: [String], sink: OutputSink = .standard,
        environment: [String: String] = ProcessInfo.processInfo.environment, interruption: Interruption = .process
    ) -> Int32 {
        CommandScope.$sink.withValue(sink) {
            CommandScope.$environment.withValue(environment) {
                CommandScope.$boundInterruption.withValue(interruption) { execute(arguments, sink) }
            }
        }
    }

    private static func execute(_ arguments: [String], _ sink: OutputSink) -> Int32 {
        let outcome = root.execute(arguments)
        outcome.write(output: sink.write, error: { sink.flush(); sink.writeError($0) })
        sink.flush()
        return outcome.exitCode
    }
}

/// What the command running on this task writes to and reads its settings from.
enum CommandScope {
    @TaskLocal static var sink = OutputSink.standard
    @TaskLocal static var environment = ProcessInfo.processInfo.environment
    @TaskLocal static var boundInterruption: Interruption?
    /// What ends the command early: the process's signals, or in a test only what the test requests.
    /// (Optional underneath, so that binding a test's own never takes the process's signals.)
    static var interruption: Interruption { boundInterruption ?? .process }

    /// The command's output, text or JSON lines as `json` says.
    static func output(json: Bool) -> CommandOutput { CommandOutput(sink, json: json) }
}
