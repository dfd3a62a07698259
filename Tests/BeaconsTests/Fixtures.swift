import Foundation

/// `Tests/Fixtures`, found from this file's path so it works wherever the repository is cloned.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // BeaconsTests
    .deletingLastPathComponent()  // Tests
    .appendingPathComponent("Fixtures")

func bytes(hex: String) -> [UInt8]? {
    let digits = Array(hex.utf8)
    guard digits.count.isMultiple(of: 2) else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16) else {
            return nil
        }
        bytes.append(byte)
    }
    return bytes
}

/// A file in the temporary directory, removed when the test is done with it.
struct TemporaryFile: ~Copyable {
    let path: String

    init(_ name: String = #function) {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("beacons-\(safe)-\(UUID().uuidString).btsnoop").path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
