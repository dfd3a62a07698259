import Arguments
import Foundation
import LoyaltyCLI

exit(LoyaltyCommand.root.main(Array(CommandLine.arguments.dropFirst())))
