import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private let outputFile = Option<String>("output", value: "FILE", help: "Write the CSV here instead of to standard output.")

/// `loyalty retailer offers export [--output FILE]`.
let retailerOffersExportCommand = Command(
    name: "export", summary: "Write your offers as CSV, in the format import reads.",
    discussion: clientDiscussion, options: [outputFile] + ClientOptions.all,
    run: clientCommand { context in
        let csv = try context.api.exportOffers(try context.retailerCredential())
        guard let path = context.arguments.value(outputFile) else {
            return context.output.write(bytes: csv)
        }
        do { try Data(csv).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)", exitCode: ExitCode.ioError)
        }
        context.output.line("exported to \(path)")
    })
