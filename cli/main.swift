import Foundation
import LoyaltyCLI

exit(LoyaltyCommand.run(Array(CommandLine.arguments.dropFirst())))
