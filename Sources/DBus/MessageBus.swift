internal import CDBus
import Foundation

/// A D-Bus failure: the error's name and message (org.bluez.Error.InProgress, ...), or what failed locally.
public struct DBusFailure: Error, CustomStringConvertible, Sendable {
    public let name: String
    public let message: String

    public var description: String { "\(name): \(message)" }
}

/// A signal received on the bus.
public struct DBusSignal: Sendable {
    public let path: String
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]
}

/// What `nextMessage` read.
public enum DBusIncoming: Sendable {
    case signal(DBusSignal)
    /// A call to an object this connection exports, already answered.
    case call(DBusMethodCall)
}

/// One private connection to a message bus (libdbus): the system bus (`system()`), the user's session bus
/// (`session()`), or a private one at an address. Owns it; confined to one thread at a time.
public final class MessageBus {
    let connection: OpaquePointer

    /// Connects to the bus at `address` (`unix:path=...`: a private bus in tests), or with nil to the system bus.
    public init(address: String?) throws(DBusFailure) {
        var error = LibDBus.Error()
        let opened =
            address.map { dbus_connection_open_private($0, &error.raw) } ?? dbus_bus_get_private(DBUS_BUS_SYSTEM, &error.raw)
        guard let connection = opened else { throw error.taken(or: "cannot connect to the system bus") }
        if address != nil, dbus_bus_register(connection, &error.raw) == 0 {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw error.taken(or: "cannot register on the bus at \(address ?? "")")
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        self.connection = connection
    }

    /// The system bus, where bluetoothd is.
    public static func system() throws(DBusFailure) -> MessageBus { try MessageBus(address: nil) }

    /// The session bus of the user's login (desktop notifications live there): at DBUS_SESSION_BUS_ADDRESS,
    /// else $XDG_RUNTIME_DIR/bus. Never autolaunches one: with neither, there is none.
    public static func session() throws(DBusFailure) -> MessageBus {
        let environment = ProcessInfo.processInfo.environment
        let address = environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : "unix:path=\($0)/bus" }
        guard let address else {
            throw DBusFailure(
                name: "org.freedesktop.DBus.Error.NoServer",
                message: "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set")
        }
        return try MessageBus(address: address)
    }

    /// This connection's unique name on the bus (":1.42").
    public var uniqueName: String { dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? "" }

    deinit {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    /// Whether a program owns `name` on the bus (org.bluez: bluetoothd runs).
    public func nameHasOwner(_ name: String) -> Bool {
        var error = LibDBus.Error()
        let owned = dbus_bus_name_has_owner(connection, name, &error.raw) != 0
        if error.isSet { _ = error.taken(or: "NameHasOwner") }  // freed: asked after every wake-up
        return owned
    }

    /// The unique name of the connection that owns `name` (`:1.42`), nil when none does: a program that
    /// restarted owns it under a new unique name.
    public func nameOwner(_ name: String) -> String? {
        let owner = try? call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: "GetNameOwner", arguments: [.string(name)])
        return owner?.first?.string
    }

    /// Asks the bus for signals matching `rule` (`type='signal',sender='org.bluez',...`).
    public func addMatch(_ rule: String) throws(DBusFailure) {
        var error = LibDBus.Error()
        dbus_bus_add_match(connection, rule, &error.raw)
        if error.isSet { throw error.taken(or: "AddMatch") }
    }

    /// Calls a method and waits up to `timeoutMilliseconds` for its reply's arguments.
    @discardableResult
    public func call(
        destination: String, path: String, interface: String, method: String, arguments: [DBusArgument] = [],
        timeoutMilliseconds: Int32 = 5000
    ) throws(DBusFailure) -> [DBusValue] {
        let message = try LibDBus.methodCall(destination, path, interface, method, arguments)
        defer { dbus_message_unref(message) }
        var error = LibDBus.Error()
        guard
            let reply = dbus_connection_send_with_reply_and_block(connection, message, timeoutMilliseconds, &error.raw)
        else { throw error.taken(or: "\(interface).\(method) failed") }
        defer { dbus_message_unref(reply) }
        return LibDBus.arguments(of: reply)
    }

    /// The connection's socket, readable when the bus has sent something (to wait on beside other input); nil
    /// once the connection is closed.
    public var descriptor: Int32? {
        var descriptor: Int32 = -1
        return dbus_connection_get_unix_fd(connection, &descriptor) != 0 ? descriptor : nil
    }

    /// The next signal, waiting up to `timeoutMilliseconds` (-1: forever) or until `wakeup` is readable;
    /// nil when none came. Method calls on the way are answered (`nextMessage`).
    public func nextSignal(timeoutMilliseconds: Int32, wakeup: Int32) throws(DBusFailure) -> DBusSignal? {
        while true {
            switch try nextMessage(timeoutMilliseconds: timeoutMilliseconds, wakeup: wakeup) {
            case .signal(let signal): return signal
            case .call: continue
            case nil: return nil
            }
        }
    }

    /// The next signal or method call, waiting up to `timeoutMilliseconds` (-1: forever) or until `wakeup` is
    /// readable; nil when none came. A method call has been answered by the object exported at its path (an
    /// UnknownObject error when none is) before it is returned.
    public func nextMessage(timeoutMilliseconds: Int32, wakeup: Int32) throws(DBusFailure) -> DBusIncoming? {
        while true {
            // Messages already read come first.
            if let message = dbus_connection_pop_message(connection) {
                defer { dbus_message_unref(message) }
                switch dbus_message_get_type(message) {
                case DBUS_MESSAGE_TYPE_SIGNAL:
                    return .signal(
                        DBusSignal(
                            path: dbus_message_get_path(message).map { String(cString: $0) } ?? "",
                            interface: dbus_message_get_interface(message).map { String(cString: $0) } ?? "",
                            member: dbus_message_get_member(message).map { String(cString: $0) } ?? "",
                            arguments: LibDBus.arguments(of: message)))
                case DBUS_MESSAGE_TYPE_METHOD_CALL:
                    let path = dbus_message_get_path(message).map { String(cString: $0) } ?? ""
                    return .call(Self.answer(message, on: connection, with: exportedHandler(at: path)))
                default:
                    continue
                }
            }
            guard try readIncoming(timeoutMilliseconds: timeoutMilliseconds, wakeup: wakeup) else { return nil }
        }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever) for the bus to send something, or until `wakeup` is
    /// readable, and reads what came into libdbus's queue; whether anything was read.
    func readIncoming(timeoutMilliseconds: Int32, wakeup: Int32) throws(DBusFailure) -> Bool {
        guard let descriptor else {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus connection is closed")
        }
        var polled = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&polled, 2, timeoutMilliseconds)
        if ready < 0, errno != EINTR {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.IOError", message: "poll: \(errno)")
        }
        guard ready > 0, polled[1].revents == 0, polled[0].revents != 0 else { return false }
        guard dbus_connection_read_write(connection, 0) != 0 else {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.Disconnected", message: "the system bus went away")
        }
        return true
    }
}

/// libdbus's iterators and errors, kept inside this module.
enum LibDBus {
    struct Error {
        var raw = CDBus.DBusError()

        init() { dbus_error_init(&raw) }

        var isSet: Bool {
            var copy = raw
            return dbus_error_is_set(&copy) != 0
        }

        /// The error as a Swift value, freeing libdbus's copy; `fallback` when none was set.
        mutating func taken(or fallback: String) -> DBusFailure {
            defer { dbus_error_free(&raw) }
            guard isSet else { return DBusFailure(name: "org.freedesktop.DBus.Error.Failed", message: fallback) }
            return DBusFailure(
                name: raw.name.map { String(cString: $0) } ?? "", message: raw.message.map { String(cString: $0) } ?? "")
        }
    }

    static func type(_ character: Character) -> Int32 { Int32(character.asciiValue!) }

    /// A method call message with its arguments; the caller unrefs it. Names and paths are checked first:
    /// libdbus aborts the process on a malformed one (its argument checks are fatal), and a path can hold
    /// what a user typed (`/org/bluez/` and `--adapter`'s name).
    static func methodCall(
        _ destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: [DBusArgument]
    ) throws(DBusFailure) -> OpaquePointer {
        var error = Error()
        let paths = [path] + arguments.compactMap { if case .objectPath(let path) = $0 { path } else { nil } }
        guard dbus_validate_bus_name(destination, &error.raw) != 0, dbus_validate_interface(interface, &error.raw) != 0,
            dbus_validate_member(method, &error.raw) != 0, paths.allSatisfy({ dbus_validate_path($0, &error.raw) != 0 })
        else { throw error.taken(or: "cannot call \(interface).\(method) on \(path)") }
        guard let message = dbus_message_new_method_call(destination, path, interface, method) else {
            throw DBusFailure(name: "org.freedesktop.DBus.Error.NoMemory", message: "cannot build \(method)")
        }
        append(arguments, to: message)
        return message
    }

    static func append(_ arguments: [DBusArgument], to message: OpaquePointer) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for argument in arguments { append(argument, to: &iterator) }
    }

    static func append(_ argument: DBusArgument, to iterator: inout DBusMessageIter) {
        switch argument {
        case .string(let text): appendString(text, type: type("s"), to: &iterator)
        case .objectPath(let path): appendString(path, type: type("o"), to: &iterator)
        case .uint32(var number): dbus_message_iter_append_basic(&iterator, type("u"), &number)
        case .int32(var number): dbus_message_iter_append_basic(&iterator, type("i"), &number)
        case .strings(let texts):
            var array = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, type("a"), "s", &array)
            for text in texts { appendString(text, type: type("s"), to: &array) }
            dbus_message_iter_close_container(&iterator, &array)
        case .variants(let values):
            var array = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, type("a"), "v", &array)
            for value in values { appendVariant(value, to: &array) }
            dbus_message_iter_close_container(&iterator, &array)
        case .variant(let value): appendVariant(value, to: &iterator)
        case .properties(let properties): appendProperties(properties, to: &iterator)
        case .managedObjects(let objects):
            appendDictionary(objects, signature: "{oa{sa{sv}}}", to: &iterator) { object, entry in
                appendString(object.path, type: type("o"), to: &entry)
                appendDictionary(object.interfaces, signature: "{sa{sv}}", to: &entry) { interface, entry in
                    appendString(interface.0, type: type("s"), to: &entry)
                    appendProperties(interface.1, to: &entry)
                }
            }
        }
    }

    static func appendProperties(_ properties: [(String, DBusPropertyValue)], to iterator: inout DBusMessageIter) {
        appendDictionary(properties, signature: "{sv}", to: &iterator) { property, entry in
            appendString(property.0, type: type("s"), to: &entry)
            appendVariant(property.1, to: &entry)
        }
    }

    /// An `a{..}` of `entries` (`signature`: "{sv}", ...), each entry's key and value written by `append`.
    static func appendDictionary<Entry>(
        _ entries: [Entry], signature: String, to iterator: inout DBusMessageIter,
        _ append: (Entry, inout DBusMessageIter) -> Void
    ) {
        var array = DBusMessageIter()
        dbus_message_iter_open_container(&iterator, type("a"), signature, &array)
        for element in entries {
            var entry = DBusMessageIter()
            dbus_message_iter_open_container(&array, type("e"), nil, &entry)
            append(element, &entry)
            dbus_message_iter_close_container(&array, &entry)
        }
        dbus_message_iter_close_container(&iterator, &array)
    }

    static func appendVariant(_ value: DBusPropertyValue, to iterator: inout DBusMessageIter) {
        var variant = DBusMessageIter()
        dbus_message_iter_open_container(&iterator, type("v"), value.signature, &variant)
        switch value {
        case .string(let text): appendString(text, type: type("s"), to: &variant)
        case .bool(let flag):
            var basic: dbus_bool_t = flag ? 1 : 0
            dbus_message_iter_append_basic(&variant, type("b"), &basic)
        case .byte(var basic): dbus_message_iter_append_basic(&variant, type("y"), &basic)
        case .int16(var basic): dbus_message_iter_append_basic(&variant, type("n"), &basic)
        case .uint16(var basic): dbus_message_iter_append_basic(&variant, type("q"), &basic)
        case .uint32(var basic): dbus_message_iter_append_basic(&variant, type("u"), &basic)
        case .bytes(let bytes): appendBytes(bytes, to: &variant)
        case .bytesByCompany(let entries):
            appendDictionary(entries, signature: "{qv}", to: &variant) { company, entry in
                var key = company.0
                dbus_message_iter_append_basic(&entry, type("q"), &key)
                appendVariant(.bytes(company.1), to: &entry)
            }
        case .patterns(let patterns):
            var array = DBusMessageIter()
            dbus_message_iter_open_container(&variant, type("a"), "(yyay)", &array)
            for pattern in patterns {
                var structure = DBusMessageIter()
                dbus_message_iter_open_container(&array, type("r"), nil, &structure)
                var start = pattern.start
                var adType = pattern.type
                dbus_message_iter_append_basic(&structure, type("y"), &start)
                dbus_message_iter_append_basic(&structure, type("y"), &adType)
                appendBytes(pattern.content, to: &structure)
                dbus_message_iter_close_container(&array, &structure)
            }
            dbus_message_iter_close_container(&variant, &array)
        }
        dbus_message_iter_close_container(&iterator, &variant)
    }

    static func appendBytes(_ bytes: [UInt8], to iterator: inout DBusMessageIter) {
        var array = DBusMessageIter()
        dbus_message_iter_open_container(&iterator, type("a"), "y", &array)
        for var byte in bytes { dbus_message_iter_append_basic(&array, type("y"), &byte) }
        dbus_message_iter_close_container(&iterator, &array)
    }

    static func appendString(_ text: String, type: Int32, to iterator: inout DBusMessageIter) {
        text.withCString { pointer in
            var value: UnsafePointer<CChar>? = pointer
            _ = dbus_message_iter_append_basic(&iterator, type, &value)
        }
    }

    static func arguments(of message: OpaquePointer) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return values(&iterator)
    }

    /// The values from the iterator's position to the end of its container.
    static func values(_ iterator: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != 0 {
            if let value = value(&iterator) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    static func value(_ iterator: inout DBusMessageIter) -> DBusValue? {
        func basic<T: BitwiseCopyable>(_ initial: T) -> T {
            var value = initial
            withUnsafeMutableBytes(of: &value) { dbus_message_iter_get_basic(&iterator, $0.baseAddress) }
            return value
        }
        let kind = dbus_message_iter_get_arg_type(&iterator)
        switch UnicodeScalar(UInt8(truncatingIfNeeded: kind)) {
        case "y": return .byte(basic(UInt8(0)))
        case "b": return .bool(basic(dbus_bool_t(0)) != 0)
        case "n": return .int16(basic(Int16(0)))
        case "q": return .uint16(basic(UInt16(0)))
        case "i": return .int32(basic(Int32(0)))
        case "u": return .uint32(basic(UInt32(0)))
        case "x": return .int64(basic(Int64(0)))
        case "t": return .uint64(basic(UInt64(0)))
        case "d": return .double(basic(Double(0)))
        case "s", "o", "g":
            let pointer = basic(UnsafePointer<CChar>?.none)
            let text = pointer.map { String(cString: $0) } ?? ""
            return kind == type("o") ? .objectPath(text) : .string(text)
        case "a":
            var inner = DBusMessageIter()
            let isDictionary = dbus_message_iter_get_element_type(&iterator) == type("e")
            dbus_message_iter_recurse(&iterator, &inner)
            let elements = values(&inner)
            guard isDictionary else { return .array(elements) }
            return .dictionary(
                elements.compactMap { element in
                    guard case .structure(let pair) = element, pair.count == 2 else { return nil }
                    return DBusValue.DictionaryEntry(key: pair[0], value: pair[1])
                })
        case "e", "r":
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return .structure(values(&inner))
        case "v":
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return value(&inner).map(DBusValue.variant)
        default:
            return nil  // unix fds and anything newer: BlueZ's scanning signals carry none
        }
    }
}
