import DBus
import Foundation

/// python-dbusmock's notification_daemon template on a bus: a notification server that records every call
/// (org.freedesktop.DBus.Mock.GetMethodCalls) and emits the signals a test asks for (ActionInvoked, as a
/// shopper's click would). Debian's python3-dbusmock, run by Debian's own Python.
public final class NotificationMock {
    public enum Failure: Error, CustomStringConvertible {
        case missing
        case notStarted(String)

        public var description: String {
            switch self {
            case .missing: "python3-dbusmock is missing: make test-deps"
            case .notStarted(let why): "the notification mock did not start: \(why)"
            }
        }
    }

    /// One Notify call's arguments.
    public struct Notification: Sendable {
        public let appName: String
        public let replacesID: UInt32
        public let summary: String
        public let body: String
        /// Keys and labels, alternating, as sent.
        public let actions: [String]
        public let hints: [String: DBusValue]
        public let expireTimeout: Int32

        public var actionKeys: [String] { stride(from: 0, to: actions.count, by: 2).map { actions[$0] } }
    }

    static let python = "/usr/bin/python3"
    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    public static var isInstalled: Bool {
        FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock/templates/notification_daemon.py")
    }

    private let process = Process()
    private let connection: MessageBus

    /// Starts the mock on the bus at `address`, reporting `capabilities` (space-separated, as the template
    /// takes them), and waits until it owns org.freedesktop.Notifications.
    public init(busAddress address: String, capabilities: String) throws {
        guard Self.isInstalled else { throw Failure.missing }
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [
            "-m", "dbusmock", "--template", "notification_daemon", "-p", "{\"capabilities\": \"\(capabilities)\"}",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        connection = try MessageBus(address: address)
        try connection.addMatch(
            "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'")
        try connection.addMatch("type='signal',interface='org.freedesktop.DBus.Mock',member='MethodCalled'")
        // It owns the name once it has loaded the template: wait for that signal (or find it owned already).
        while !connection.nameHasOwner(Self.service) {
            guard process.isRunning else { throw Failure.notStarted("dbusmock exited \(process.terminationStatus)") }
            _ = try connection.nextSignal(timeoutMilliseconds: 200, wakeup: -1)
        }
    }

    /// Every Notify call so far, in order.
    public func notifications() throws -> [Notification] {
        try calls(of: "Notify").compactMap { values in
            guard values.count == 8 else { return nil }
            let arguments = values.map(\.unwrapped)
            guard case .array(let actions) = arguments[5], case .dictionary(let hints) = arguments[6] else { return nil }
            return Notification(
                appName: arguments[0].string ?? "", replacesID: UInt32(arguments[1].integer ?? -1),
                summary: arguments[3].string ?? "", body: arguments[4].string ?? "",
                actions: actions.compactMap(\.string),
                hints: Dictionary(hints.compactMap { entry in entry.key.string.map { ($0, entry.value.unwrapped) } }) { $1 },
                expireTimeout: Int32(arguments[7].integer ?? 0))
        }
    }

    /// The ids of every CloseNotification call so far, in order.
    public func closedNotifications() throws -> [UInt32] {
        try calls(of: "CloseNotification").compactMap { values in
            values.first?.unwrapped.integer.flatMap { UInt32(exactly: $0) }
        }
    }

    /// The arguments of every call of `method` so far, in order (dbusmock's GetMethodCalls: (timestamp, args)).
    private func calls(of method: String) throws -> [[DBusValue]] {
        let reply = try connection.call(
            destination: Self.service, path: Self.path, interface: "org.freedesktop.DBus.Mock",
            method: "GetMethodCalls", arguments: [.string(method)])
        guard case .array(let calls)? = reply.first else { return [] }
        return calls.compactMap { call in
            guard case .structure(let fields) = call, fields.count == 2, case .array(let values) = fields[1]
            else { return nil }
            return values
        }
    }

    /// Waits up to `seconds` for at least `count` Notify calls, and returns them all.
    public func waitForNotifications(_ count: Int, seconds: Double = 30) throws -> [Notification] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let calls = try notifications()
            if calls.count >= count || Date() > deadline { return calls }
            // Each Notify makes the mock emit MethodCalled: wake for it rather than poll blindly.
            _ = try connection.nextSignal(timeoutMilliseconds: 100, wakeup: -1)
        }
    }

    /// The id Notify returned for the `index`-th call (from 0): the template counts from 1, and a call that
    /// replaces keeps its id.
    public func id(of index: Int, in calls: [Notification]) -> UInt32 {
        var next: UInt32 = 1
        var id: UInt32 = 0
        for call in calls[...index] {
            if call.replacesID != 0 {
                id = call.replacesID
            } else {
                id = next
                next += 1
            }
        }
        return id
    }

    /// The shopper chose `action` on notification `id`.
    public func invoke(_ action: String, on id: UInt32) throws {
        try connection.call(
            destination: Self.service, path: Self.path, interface: "org.freedesktop.DBus.Mock", method: "EmitSignal",
            arguments: [.string(Self.service), .string("ActionInvoked"), .string("us"), .variants([.uint32(id), .string(action)])])
    }

    /// The server goes away, as a crashed one would.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
