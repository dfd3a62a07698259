import Foundation

/// A folder nothing can be written to, root included: as root, a read-only bind mount of itself; otherwise
/// mode 0555. `files` are written into it first.
final class ReadOnlyFolder {
    struct Failure: Error, CustomStringConvertible { var description: String }

    let url: URL
    private let mounted: Bool

    init(files: [String: Data] = [:]) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: url.appendingPathComponent(name)) }
        mounted = getuid() == 0
        if mounted {
            try Self.run(["mount", "--bind", url.path, url.path])
            try Self.run(["mount", "-o", "remount,bind,ro", url.path])
        } else {
            chmod(url.path, 0o555)
        }
        guard !FileManager.default.createFile(atPath: url.appendingPathComponent("probe").path, contents: nil) else {
            throw Failure(description: "\(url.path) is still writable")
        }
    }

    deinit {
        if mounted { try? Self.run(["umount", url.path]) } else { chmod(url.path, 0o755) }
        try? FileManager.default.removeItem(at: url)
    }

    private static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }
}
