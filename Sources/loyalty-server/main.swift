import Arguments
import Foundation
import LoyaltyServer

let command = ServerCommand.command(environment: ProcessInfo.processInfo.environment)
exit(command.main(Array(CommandLine.arguments.dropFirst())))
