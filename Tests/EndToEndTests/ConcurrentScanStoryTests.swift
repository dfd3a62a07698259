import Foundation
import LoyaltyTesting
import Testing

/// Three `loyalty scan --replay` at once on one LOYALTY_HOME show each offer once between them, and the
/// outbox holds each once (in 2 runs of 5 an offer showed twice).
@Suite struct ConcurrentScanStoryTests {
    @Test func threeScansOnOneHomeShowEachOfferOnce() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Crowded", uuid: uuid)
        try store.setOffer(1, 1, "Sushi", [])
        try store.setOffer(1, 2, "Pizza", [])
        let walk = try server.walk(["\(uuid):1:1@0=1,10=1,12=20", "\(uuid):1:2@0=20,14=20,15=1,25=1"])
        for round in 1...3 {
            let shopper = try server.newAccount()
            try shopper.ok(["sync", "--all"])  // The scans are offline: the whole catalog, not a working set.
            let processes = (0..<3).map { _ in
                let process = Process()
                process.executableURL = Binary("loyalty").url
                process.arguments = ["scan", "--replay", walk.path, "--json", "--offline"]
                process.environment = ProcessInfo.processInfo.environment.merging(
                    ["LOYALTY_HOME": shopper.home.path, "LOYALTY_SERVER": server.url]) { $1 }
                process.standardOutput = Pipe()
                process.standardError = FileHandle.nullDevice
                process.standardInput = FileHandle.nullDevice
                return process
            }
            for process in processes { try process.run() }
            var titles: [String] = []
            for process in processes {
                let output = (process.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                        object["event"] as? String == "offer", let offer = object["offer"] as? [String: Any],
                        let title = offer["title"] as? String
                    else { continue }
                    titles.append(title)
                }
            }
            #expect(titles.sorted() == ["Pizza", "Sushi"], "round \(round): \(titles)")
            let account = try #require(try shopper.ok(["account", "show", "--json"]).jsonLines.first)
            #expect(account["unsent_seen"] as? Int == 2, "round \(round): \(account)")
        }
    }
}
