import Foundation

/// `Tests/Fixtures`: the captures and vectors, with their licences, in the repository.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")
