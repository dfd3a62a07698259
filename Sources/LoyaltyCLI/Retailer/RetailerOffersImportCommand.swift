import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private let csvFile = Positional("FILE.csv")

/// `loyalty retailer offers import FILE.csv`: all rows in one request, or none.
let retailerOffersImportCommand = Command(
    name: "import", summary: "Create or replace many offers from a CSV file, all or none.",
    discussion: """
        The first line names the columns: major,minor,title and any of description, category, image_url,
        starts_at, ends_at (ISO 8601), per_shopper_limit, total_limit, reshow_after_s, schedule
        (weekly hours: 'Europe/London: weekdays 17:00-19:00'), shows_per_day (1 to 100). `export` writes the
        same format. A bad row imports nothing: each problem is listed with its line, and the exit code is 65.

        \(clientDiscussion)
        """,
    options: ClientOptions.all, positionals: [csvFile],
    run: clientCommand { context in
        let path = context.arguments.word(csvFile)!
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw CommandFailure("cannot read \(path): \(error.localizedDescription)", exitCode: ExitCode.ioError)
        }
        switch try context.api.importOffers(csv: bytes, try context.retailerCredential()) {
        case .success(let result):
            context.output.emit(
                text: "imported \(path): \(result.created) created, \(result.updated) updated, \(result.unchanged) unchanged",
                json: ClientJSONLines.offersImported(result))
        case .failure(let failure):
            for problem in failure.problems { context.output.error("\(path): \(problem)") }
            throw CommandFailure(
                "nothing was imported: \(failure.problems.count) problem\(failure.problems.count == 1 ? "" : "s") in \(path)",
                exitCode: ExitCode.dataError)
        }
    })
