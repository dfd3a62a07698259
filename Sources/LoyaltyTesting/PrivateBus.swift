import DBus
import Foundation

/// A private message bus: Debian's dbus-daemon on a socket of its own, with its session policy, or one that
/// refuses every call to `refusing` (as a system bus refuses org.bluez to a user outside the bluetooth group).
public final class PrivateBus {
    public enum Failure: Error, CustomStringConvertible {
        case missingDaemon
        case noAddress(String)
        case nameNotOwned(String)

        public var description: String {
            switch self {
            case .missingDaemon: "dbus-daemon is missing: make test-deps"
            case .noAddress(let said): "dbus-daemon did not say its address: \(said)"
            case .nameNotOwned(let name): "could not own \(name) on the private bus"
            }
        }
    }

    public let address: String
    private let process = Process()
    private let directory: URL

    public init(refusing destination: String? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { throw Failure.missingDaemon }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = directory.appendingPathComponent("bus.conf")
        let refusal = destination.map { "<deny send_destination=\"\($0)\"/>" } ?? ""
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <listen>unix:dir=\(directory.path)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
            \(refusal)
          </policy>
        </busconfig>
        """.write(to: configuration, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(configuration.path)", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard address.hasPrefix("unix:") else { throw Failure.noAddress(address) }
    }

    /// A connection that owns `name` (org.bluez: bluetoothd runs, as far as a client can tell) while it is kept.
    public func own(_ name: String) throws -> MessageBus {
        let connection = try MessageBus(address: address)
        let reply = try connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "RequestName", arguments: [.string(name), .uint32(0)])
        // 1: DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER.
        guard reply.first?.integer == 1 else { throw Failure.nameNotOwned(name) }
        return connection
    }

    deinit {
        // SIGKILL: Process starts it with this thread's signal mask, which may block SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
