import Arguments
import Foundation
import LoyaltyServer

let outcome = ServerCommand.command(environment: ProcessInfo.processInfo.environment)
    .execute(Array(CommandLine.arguments.dropFirst()))
if let text = outcome.output { print(text, terminator: text.hasSuffix("\n") ? "" : "\n") }
if let text = outcome.error { FileHandle.standardError.write(Data((text + "\n").utf8)) }
exit(outcome.exitCode)
