/// What a command line comes to, for the program's `main` to say and exit with: the Arguments module parses
/// and runs, and leaves the printing to the program.
public struct Outcome: Sendable {
    public let exitCode: Int32
    /// Help, the version or a completion script: for standard output.
    public let output: String?
    /// `error: ...` (with the usage line for wrong arguments): for standard error.
    public let error: String?
}

extension Command {
    /// Parses `arguments` (without the program's name) and runs the chosen command: 64 for wrong arguments,
    /// with the command's usage line.
    public func execute(_ arguments: [String]) -> Outcome {
        do {
            switch try parse(arguments) {
            case .print(let text): return Outcome(exitCode: ExitCode.success, output: text, error: nil)
            case .run(let command, let parsed): try command.run?(parsed)
            }
            return Outcome(exitCode: ExitCode.success, output: nil, error: nil)
        } catch let error as UsageError {
            return Outcome(
                exitCode: ExitCode.usage, output: nil,
                error: "error: \(error.message)\n\(error.usage)\nSee '\(error.commandPath) --help'.")
        } catch let exit as SilentExit {
            return Outcome(exitCode: exit.code, output: nil, error: nil)
        } catch let failure as CommandError {
            return Outcome(exitCode: failure.exitCode, output: nil, error: "error: \(failure.description)")
        } catch {
            return Outcome(exitCode: ExitCode.failure, output: nil, error: "error: \(error)")
        }
    }
}

extension Outcome {
    /// Writes the outcome as both programs end: the output ending in a newline, then the error on a line of its
    /// own.
    public func write(output: (String) -> Void, error: (String) -> Void) {
        if let text = self.output { output(text.hasSuffix("\n") ? text : text + "\n") }
        if let text = self.error { error(text + "\n") }
    }
}
