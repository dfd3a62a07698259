import Foundation

/// A product of this package (`loyalty`, `loyalty-server`), run as a user would run it.
public struct Binary: Sendable {
    public let url: URL

    /// Products sit next to the test bundle in SwiftPM's build directory.
    public init(_ name: String) {
        let buildDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        url = buildDirectory.appendingPathComponent(name)
    }

    /// A program elsewhere: an installed copy, or a tool on PATH (`Binary(at: "bash")`, through env(1)).
    public init(at path: String) {
        url = URL(fileURLWithPath: path.contains("/") ? path : "/usr/bin/env")
        leadingArguments = path.contains("/") ? [] : [path]
    }

    /// Arguments that come before the caller's: the tool's name when it is run through env(1).
    private var leadingArguments: [String] = []

    /// The executable and arguments that run it with `arguments`, for a caller that starts it itself.
    public func launch(_ arguments: [String]) -> (executable: URL, arguments: [String]) { (url, leadingArguments + arguments) }

    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }

        /// Standard output's lines, each parsed as a JSON object.
        public var jsonLines: [[String: Any]] {
            stdout.split(separator: "\n").compactMap { line in
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            }
        }
    }

    /// Runs to completion, or until killed after `timeout` seconds. Standard input is empty, so the
    /// program sees no terminal.
    public func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double? = nil) throws -> Result {
        let process = Process()
        process.executableURL = url
        process.arguments = leadingArguments + arguments
        // Client state never lands in the user's home: each run gets this process's scratch home unless told.
        let scratch = ["LOYALTY_HOME": scratchHome.path, "LOYALTY_SERVER": "http://127.0.0.1:9"]
        process.environment = ProcessInfo.processInfo.environment.merging(scratch) { $1 }.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        if let timeout { DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog) }
        defer { watchdog.cancel() }
        // Drain stderr on another thread while reading stdout, so a full pipe never blocks the child.
        let errData = DataBox()
        let errDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errData.data = err.fileHandleForReading.readDataToEndOfFile()
            errDone.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errDone.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.data, as: UTF8.self))
    }
}

/// A client home for runs that name none, removed with the test process's temporary directory.
public let scratchHome = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-e2e-\(getpid())")

private final class DataBox: @unchecked Sendable {
    var data = Data()
}
