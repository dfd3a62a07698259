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
            try mountTool(["mount", "--bind", url.path, url.path])
            try mountTool(["mount", "-o", "remount,bind,ro", url.path])
        } else {
            chmod(url.path, 0o555)
        }
        guard !FileManager.default.createFile(atPath: url.appendingPathComponent("probe").path, contents: nil) else {
            throw Failure(description: "\(url.path) is still writable")
        }
    }

    deinit {
        if mounted { try? mountTool(["umount", url.path]) } else { chmod(url.path, 0o755) }
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs mount(8) or umount(8) (as root), `arguments` starting with which.
func mountTool(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw ReadOnlyFolder.Failure(description: "\(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
    }
}
