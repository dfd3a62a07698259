import Foundation
import LoyaltyTesting

/// Root-Canal 1.10.0 (PyPI `rootcanal`), Android's controller emulator, run as its binary: two HCI ports
/// on one shared LE link, one a legacy-only controller and one with LE Extended Advertising. Each TCP
/// connection to a port is a new controller. Stopped (SIGKILL) when released.
final class RootCanal {
    let legacyPort: UInt16
    let extendedPort: UInt16
    private let process: Process

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts it and waits for both "Listening on" lines (never probing a port: a connection that closes
    /// at once kills it). With `sniffingInto`, each connection's HCI packets go to a pcap file there, as the
    /// controller saw them.
    init(sniffingInto directory: URL? = nil) throws {
        let binary = try Self.binaryPath()
        let ports = try (0..<5).map { _ in try LoopbackSocket.freePort() }
        legacyPort = ports[0]
        extendedPort = ports[1]
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("rootcanal-\(getpid())-\(ports[0]).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "-test_port", String(ports[2]), "-link_port", String(ports[3]), "-link_ble_port", String(ports[4]),
            "-configuration",
            "tcp_server { tcp_port: \(legacyPort) configuration { features { le_extended_advertising: false } } } "
                + "tcp_server { tcp_port: \(extendedPort) }",
        ] + (directory == nil ? [] : ["-enable_hci_sniffer"])
        if let directory { process.currentDirectoryURL = directory }
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if text.contains("Listening on: \(legacyPort) "), text.contains("Listening on: \(extendedPort) ") { return }
            guard process.isRunning else { throw Unavailable(description: "rootcanal exited: \(text.suffix(500))") }
            usleep(50_000)
        }
        stop()
        throw Unavailable(description: "rootcanal did not listen on \(legacyPort) and \(extendedPort) within 15 s")
    }

    deinit { stop() }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The binary inside the installed Python package (`make test-deps` installs it).
    private static func binaryPath() throws -> String {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = [
            "python3", "-c",
            "import rootcanal, os, importlib.metadata as m; print(m.version('rootcanal')); print(os.path.dirname(rootcanal.__file__))",
        ]
        let out = Pipe()
        python.standardOutput = out
        python.standardError = FileHandle.nullDevice
        try python.run()
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        python.waitUntilExit()
        guard python.terminationStatus == 0, lines.count == 2 else {
            throw Unavailable(description: "the rootcanal Python package is not installed (make test-deps installs it)")
        }
        guard lines[0] == "1.10.0" else {
            throw Unavailable(description: "rootcanal \(lines[0]) is installed; these tests need 1.10.0 (make test-deps)")
        }
        let path = "\(lines[1])/bin/linux-x86_64/rootcanal"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Unavailable(description: "no rootcanal binary for this machine at \(path)")
        }
        return path
    }
}
