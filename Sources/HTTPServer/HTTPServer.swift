internal import CMicroHTTPD
import Foundation
import Synchronization

public struct HTTPServerLimits: Sendable {
    /// Longer bodies are refused with `HTTPRejection.bodyTooLarge` and never buffered.
    public var maxBodyBytes: Int = 64 * 1024
    /// Paths whose bodies may be longer than `maxBodyBytes` (a bulk upload), with their own limit.
    public var maxBodyBytesByPath: [String: Int] = [:]
    /// Connections beyond this are closed on accept.
    public var connectionLimit: Int = 1024
    /// An idle connection is closed after this long.
    public var connectionTimeoutSeconds: Int = 30
    /// Handler threads: each request's handler blocks one of them for as long as it runs.
    public var threads: Int = 2 * ProcessInfo.processInfo.activeProcessorCount
    /// Per connection, for the request line, headers and read buffer; longer headers get 431.
    public var memoryPerConnection: Int = 128 * 1024

    public init() {}
}

public enum HTTPServerError: Error, CustomStringConvertible, Equatable {
    /// `host` is not an address or a name this machine resolves.
    case invalidHost(String, detail: String)
    /// libmicrohttpd could not start, e.g. because the port is taken.
    case couldNotStart(host: String, port: UInt16, detail: String)

    public var description: String {
        switch self {
        case .invalidHost(let host, let detail):
            "cannot listen on host '\(host)': \(detail); use an address such as 127.0.0.1, 0.0.0.0 or ::1"
        case .couldNotStart(let host, let port, let detail):
            "cannot listen on \(host):\(port): \(detail); check that no other process uses the port "
                + "(or choose another) and that the address belongs to this machine"
        }
    }
}

/// An HTTP/1.1 server on libmicrohttpd: a pool of `limits.threads` threads, each polling its own
/// epoll set and running handlers synchronously, so a handler may block (on the database) without
/// stalling the other threads.
public final class HTTPServer: @unchecked Sendable {
    /// The port the server listens on: the real one when it was started on port 0.
    public let port: UInt16

    private let context: ServerContext
    private let lock = NSLock()
    /// The running daemon, nil once shut down. Guarded by `lock`.
    private var daemon: OpaquePointer?

    /// Binds and starts serving at once. `port` 0 picks an ephemeral port (read `port`).
    /// MHD's own error messages (e.g. "connection limit reached") go to `diagnostics`,
    /// standard error when nil.
    public init(
        host: String, port: UInt16, limits: HTTPServerLimits = .init(),
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        diagnostics: (@Sendable (String) -> Void)? = nil
    ) throws(HTTPServerError) {
        var address = try Self.socketAddress(host: host, port: port)
        let context = ServerContext(
            maxBodyBytes: limits.maxBodyBytes, maxBodyBytesByPath: limits.maxBodyBytesByPath, reject: reject,
            handler: handler, diagnostics: diagnostics)
        var flags =
            MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
        if address.ss_family == sa_family_t(AF_INET6) { flags |= MHD_USE_IPv6.rawValue }
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                loyalty_MHD_start_daemon(
                    flags, address, accessHandler, contextPointer, requestCompleted, contextPointer,
                    logMessage, contextPointer, UInt32(clamping: max(1, limits.threads)),
                    UInt32(clamping: limits.connectionLimit), max(0, limits.memoryPerConnection),
                    UInt32(clamping: limits.connectionTimeoutSeconds))
            }
        }
        guard let started else {
            throw .couldNotStart(
                host: host, port: port,
                detail: context.lastDiagnostic ?? "libmicrohttpd refused the options")
        }
        self.context = context
        self.daemon = started
        self.port = loyalty_MHD_bound_port(started)
    }

    deinit {
        if let daemon { MHD_stop_daemon(daemon) }
    }

    /// Stops accepting connections, waits up to `gracePeriod` for the requests in flight to be
    /// answered (telling their clients to close), then stops the daemon. Idempotent.
    public func shutdown(gracePeriod: Duration = .seconds(30)) {
        let daemon: OpaquePointer? = lock.withLock {
            defer { self.daemon = nil }
            return self.daemon
        }
        guard let daemon else { return }
        context.isDraining.store(true, ordering: .relaxed)
        let listenSocket = MHD_quiesce_daemon(daemon)
        context.waitForRequestsInFlight(gracePeriod: gracePeriod)
        MHD_stop_daemon(daemon)
        // MHD hands the listening socket back on quiesce and closes it no more.
        if listenSocket >= 0 { close(listenSocket) }
    }

    private static func socketAddress(host: String, port: UInt16) throws(HTTPServerError)
        -> sockaddr_storage
    {
        let name =
            host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name.isEmpty ? nil : name, nil, &hints, &results)
        guard status == 0, let first = results else {
            throw .invalidHost(host, detail: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(results) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { storageBytes in
            storageBytes.copyMemory(
                from: UnsafeRawBufferPointer(
                    start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        let isIPv6 = storage.ss_family == sa_family_t(AF_INET6)
        withUnsafeMutablePointer(to: &storage) { pointer in
            if isIPv6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_port = port.bigEndian
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    $0.pointee.sin_port = port.bigEndian
                }
            }
        }
        return storage
    }
}

/// What the C callbacks reach through their context pointer. It outlives the daemon: HTTPServer
/// holds it and stops the daemon before letting go.
private final class ServerContext: @unchecked Sendable {
    let maxBodyBytes: Int
    let maxBodyBytesByPath: [String: Int]
    /// An oversized chunked body is read and dropped so the client gets its 413; past this many
    /// dropped bytes the sender is cut off instead.
    let maxDiscardedBytes: Int
    let reject: @Sendable (HTTPRejection) -> HTTPResponse
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let diagnostics: (@Sendable (String) -> Void)?
    let isDraining = Atomic<Bool>(false)

    private let condition = NSCondition()
    /// Requests the access handler has seen and MHD has not yet reported complete. Guarded by `condition`.
    private var requestsInFlight = 0
    private var lastMessage: String?

    init(
        maxBodyBytes: Int, maxBodyBytesByPath: [String: Int],
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        diagnostics: (@Sendable (String) -> Void)?
    ) {
        self.maxBodyBytes = max(0, maxBodyBytes)
        self.maxBodyBytesByPath = maxBodyBytesByPath
        self.maxDiscardedBytes = max(4 * self.maxBodyBytes, 1 << 20)
        self.reject = reject
        self.handler = handler
        self.diagnostics = diagnostics
    }

    var lastDiagnostic: String? { condition.withLock { lastMessage } }

    func record(diagnostic message: String) {
        condition.withLock { lastMessage = message }
        if let diagnostics {
            diagnostics(message)
        } else {
            FileHandle.standardError.write(Data("libmicrohttpd: \(message)\n".utf8))
        }
    }

    func requestStarted() {
        condition.withLock { requestsInFlight += 1 }
    }

    func requestFinished() {
        condition.withLock {
            requestsInFlight -= 1
            if requestsInFlight == 0 { condition.broadcast() }
        }
    }

    func waitForRequestsInFlight(gracePeriod: Duration) {
        let (seconds, attoseconds) = gracePeriod.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.withLock {
            while requestsInFlight > 0 && condition.wait(until: deadline) {}
        }
    }
}

/// One request's state between the access handler's calls, kept in MHD's `*con_cls`.
private final class RequestState {
    var body: [UInt8] = []
    var maxBodyBytes = 0
    var isTooLarge = false
    var discardedBytes = 0
}

/// Called once when the headers are in, once per body chunk, and once more at the end of the body;
/// a response may be queued only on the first or the last call.
private let accessHandler: MHD_AccessHandlerCallback = {
    contextPointer, connection, url, method, _, uploadData, uploadDataSize, requestPointer in
    guard let contextPointer, let connection, let uploadDataSize, let requestPointer else {
        return MHD_Result.NO
    }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()

    guard let statePointer = requestPointer.pointee else {
        let state = RequestState()
        requestPointer.pointee = Unmanaged.passRetained(state).toOpaque()
        context.requestStarted()
        state.maxBodyBytes = url.flatMap { context.maxBodyBytesByPath[String(cString: $0)] } ?? context.maxBodyBytes
        if let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
            let length = Int(String(cString: declared))
        {
            guard length <= state.maxBodyBytes else {
                // Queued before the body is read: MHD drops the body and closes the connection.
                state.isTooLarge = true
                return queue(
                    context.reject(.bodyTooLarge(limit: state.maxBodyBytes)), on: connection, context)
            }
            state.body.reserveCapacity(length)
        }
        return MHD_Result.YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()

    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        uploadDataSize.pointee = 0
        if !state.isTooLarge && state.body.count + chunkSize > state.maxBodyBytes {
            state.isTooLarge = true
            state.body = []
        }
        if state.isTooLarge {
            state.discardedBytes += chunkSize
            return state.discardedBytes > context.maxDiscardedBytes ? MHD_Result.NO : MHD_Result.YES
        }
        state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: chunkSize))
        return MHD_Result.YES
    }

    if state.isTooLarge {
        return queue(
            context.reject(.bodyTooLarge(limit: state.maxBodyBytes)), on: connection, context)
    }
    var request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "GET",
        path: url.map { String(cString: $0) } ?? "/",
        query: values(of: connection, .GET_ARGUMENT_KIND, lowercasingNames: false),
        headers: values(of: connection, .HEADER_KIND, lowercasingNames: true),
        remoteAddress: remoteAddress(of: connection))
    swap(&request.body, &state.body)
    return queue(context.handler(request), on: connection, context)
}

private let requestCompleted: MHD_RequestCompletedCallback = {
    contextPointer, _, requestPointer, _ in
    guard let contextPointer, let statePointer = requestPointer?.pointee else { return }
    Unmanaged<RequestState>.fromOpaque(statePointer).release()
    requestPointer?.pointee = nil
    Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue().requestFinished()
}

private let logMessage: MHD_LogCallback = { contextPointer, format, arguments in
    guard let contextPointer, let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        .trimmingCharacters(in: .whitespacesAndNewlines)
    Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue().record(
        diagnostic: message)
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer, _ context: ServerContext)
    -> MHD_Result
{
    let created = response.body.withUnsafeBytes {
        MHD_create_response_from_buffer(
            $0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let created else { return MHD_Result.NO }
    defer { MHD_destroy_response(created) }
    for (name, value) in response.headers where name.lowercased() != "content-length" {
        // MHD refuses names and values with line breaks: such a header is dropped, not sent.
        _ = MHD_add_response_header(created, name, value)
    }
    if context.isDraining.load(ordering: .relaxed) {
        _ = MHD_add_response_header(created, "Connection", "close")
    }
    let status = (100...999).contains(response.status) ? UInt32(response.status) : 500
    return MHD_queue_response(connection, status, created)
}

private func values(of connection: OpaquePointer, _ kind: MHD_ValueKind, lowercasingNames: Bool)
    -> [String: String]
{
    var collected: (values: [String: String], lowercasingNames: Bool) = ([:], lowercasingNames)
    _ = withUnsafeMutablePointer(to: &collected) { collectedPointer in
        MHD_get_connection_values(
            connection, kind,
            { pointer, _, key, value in
                guard let pointer, let key else { return MHD_Result.YES }
                let collected = pointer.assumingMemoryBound(
                    to: (values: [String: String], lowercasingNames: Bool).self)
                let name =
                    collected.pointee.lowercasingNames
                    ? String(cString: key).lowercased() : String(cString: key)
                let value = value.map { String(cString: $0) } ?? ""
                if collected.pointee.lowercasingNames, let earlier = collected.pointee.values[name] {
                    collected.pointee.values[name] = earlier + ", " + value
                } else {
                    collected.pointee.values[name] = value
                }
                return MHD_Result.YES
            }, collectedPointer)
    }
    return collected.values
}

private func remoteAddress(of connection: OpaquePointer) -> String {
    guard let address = loyalty_MHD_client_address(connection) else { return "" }
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
            var raw = address.pointee.sin_addr
            _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
        }
    case AF_INET6:
        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
            var raw = address.pointee.sin6_addr
            _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
        }
    default:
        return ""
    }
    return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
