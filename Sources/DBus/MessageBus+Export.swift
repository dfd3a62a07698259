internal import CDBus
import Foundation

/// A method call to an object this connection exports.
public struct DBusMethodCall: Sendable {
    public let path: String
    /// Empty when the caller named none.
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]
}

/// What an exported object answers a method call with.
public enum DBusMethodReply: Sendable {
    case arguments([DBusArgument])
    /// A D-Bus error: `name` such as org.freedesktop.DBus.Error.UnknownMethod, and a message.
    case error(name: String, message: String)
}

/// A handler registered with libdbus for one object path; libdbus holds it until the path is unregistered.
private final class ExportedObject {
    let handler: (DBusMethodCall) -> DBusMethodReply

    init(_ handler: @escaping (DBusMethodCall) -> DBusMethodReply) { self.handler = handler }
}

extension MessageBus {
    /// Exports an object at `path`: the method calls to it that arrive while this connection dispatches
    /// (`dispatch`, `callDispatching`) go to `handler` on the dispatching thread, and its answer is sent back.
    public func export(path: String, _ handler: @escaping (DBusMethodCall) -> DBusMethodReply)
        throws(DBusFailure)
    {
        var table = DBusObjectPathVTable()
        table.unregister_function = { _, context in
            if let context { Unmanaged<ExportedObject>.fromOpaque(context).release() }
        }
        table.message_function = { connection, message, context in
            guard let connection, let message, let context,
                dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL
            else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            let object = Unmanaged<ExportedObject>.fromOpaque(context).takeUnretainedValue()
            _ = MessageBus.answer(message, on: connection, with: object.handler)
            return DBUS_HANDLER_RESULT_HANDLED
        }
        let context = Unmanaged.passRetained(ExportedObject(handler)).toOpaque()
        var error = LibDBus.Error()
        guard
            dbus_connection_try_register_object_path(connection, path, &table, context, &error.raw) != 0
        else {
            Unmanaged<ExportedObject>.fromOpaque(context).release()
            throw error.taken(or: "cannot export \(path)")
        }
    }

    /// Hands a method call to `handler` (nil: no object is exported at its path) and sends its answer, unless the
    /// caller asked for none (BlueZ's AdvertisementMonitor1 calls are [noreply]); the call as read.
    static func answer(
        _ message: OpaquePointer, on connection: OpaquePointer, with handler: ((DBusMethodCall) -> DBusMethodReply)?
    ) -> DBusMethodCall {
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        let call = DBusMethodCall(
            path: text(dbus_message_get_path(message)), interface: text(dbus_message_get_interface(message)),
            member: text(dbus_message_get_member(message)), arguments: LibDBus.arguments(of: message))
        let answer =
            handler?(call)
            ?? .error(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object at \(call.path)")
        guard dbus_message_get_no_reply(message) == 0 else { return call }
        let reply: OpaquePointer?
        switch answer {
        case .arguments(let arguments):
            reply = dbus_message_new_method_return(message)
            if let reply { LibDBus.append(arguments, to: reply) }
        case .error(let name, let text):
            reply = dbus_message_new_error(message, name, text)
        }
        if let reply {
            dbus_connection_send(connection, reply, nil)
            dbus_message_unref(reply)
        }
        return call
    }

    /// The handler exported at exactly `path`, if any.
    func exportedHandler(at path: String) -> ((DBusMethodCall) -> DBusMethodReply)? {
        var context: UnsafeMutableRawPointer?
        guard dbus_connection_get_object_path_data(connection, path, &context) != 0, let context else { return nil }
        return Unmanaged<ExportedObject>.fromOpaque(context).takeUnretainedValue().handler
    }

    /// Stops exporting the object at `path`.
    public func unexport(path: String) {
        dbus_connection_unregister_object_path(connection, path)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for messages, or until `wakeup` is readable, and hands
    /// the method calls among them to the exported objects; other messages are dropped. Whether any came.
    @discardableResult
    public func dispatch(timeoutMilliseconds: Int32, wakeup: Int32) throws(DBusFailure) -> Bool {
        // Messages read while awaiting a reply (callDispatching hands out one per read) are already queued:
        // handled before waiting on the socket, which would not wake for them.
        let queued = dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS
        let came = queued ? true : try readIncoming(timeoutMilliseconds: timeoutMilliseconds, wakeup: wakeup)
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
        return came
    }

    /// Calls a method whose callee may call this connection's exported objects before it answers (BlueZ's
    /// RegisterAdvertisement reads the advertisement's properties first): those calls are dispatched while
    /// the reply is awaited, for up to `timeoutMilliseconds`.
    @discardableResult
    public func callDispatching(
        destination: String, path: String, interface: String, method: String,
        arguments: [DBusArgument] = [],
        timeoutMilliseconds: Int32 = 5000
    ) throws(DBusFailure) -> [DBusValue] {
        let message = try LibDBus.methodCall(destination, path, interface, method, arguments)
        defer { dbus_message_unref(message) }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message, &pending, timeoutMilliseconds) != 0,
            let pending
        else {
            throw DBusFailure(
                name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus connection is closed")
        }
        defer { dbus_pending_call_unref(pending) }
        // Without a main loop libdbus never times a pending call out: the deadline is kept here.
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while dbus_pending_call_get_completed(pending) == 0 {
            let remaining = ContinuousClock.now.duration(to: deadline).components
            let milliseconds = remaining.seconds * 1000 + remaining.attoseconds / 1_000_000_000_000_000
            guard milliseconds > 0 else {
                dbus_pending_call_cancel(pending)
                throw DBusFailure(
                    name: "org.freedesktop.DBus.Error.NoReply",
                    message: "\(interface).\(method): no answer in \(timeoutMilliseconds) ms")
            }
            guard dbus_connection_read_write_dispatch(connection, Int32(clamping: milliseconds)) != 0
            else {
                throw DBusFailure(
                    name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus went away")
            }
        }
        guard let reply = dbus_pending_call_steal_reply(pending) else {
            throw DBusFailure(
                name: "org.freedesktop.DBus.Error.NoReply", message: "\(interface).\(method): no answer")
        }
        defer { dbus_message_unref(reply) }
        var error = LibDBus.Error()
        if dbus_set_error_from_message(&error.raw, reply) != 0 {
            throw error.taken(or: "\(interface).\(method) failed")
        }
        return LibDBus.arguments(of: reply)
    }
}
