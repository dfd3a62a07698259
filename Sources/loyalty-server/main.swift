import Foundation
import LoyaltyAPI
import LoyaltyServer

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    guard let options = try ServerOptions.parse(arguments, environment: ProcessInfo.processInfo.environment) else {
        print(ServerOptions.usage)
        exit(0)
    }
    if options.versionRequested {
        print("loyalty-server \(Release.version)")
        exit(0)
    }
    try ServerCommand.run(options, openAPIDocument: Documents.openAPI, schema: Documents.schema)
} catch let error as ServerOptions.UsageError {
    FileHandle.standardError.write(Data("loyalty-server: \(error)\n\n\(ServerOptions.usage)\n".utf8))
    exit(64)
} catch {
    ServerLog.standardError(ServerLog.line(.error, "failed", ["error": .string("\(error)")]))
    exit(1)
}
