import Arguments
import Foundation

let outcome = ServerCommand.command(environment: ProcessInfo.processInfo.environment)
    .execute(Array(CommandLine.arguments.dropFirst()))
outcome.write(
    output: { FileHandle.standardOutput.write(Data($0.utf8)) }, error: { FileHandle.standardError.write(Data($0.utf8)) })
exit(outcome.exitCode)
