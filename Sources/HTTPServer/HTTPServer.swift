internal import CMicroHTTPD
import Foundation
import Synchronization
import SystemCalls

/// An HTTP/1.1 server on libmicrohttpd: a thread per connection (MHD_USE_THREAD_PER_CONNECTION) runs its requests'
/// handlers synchronously, so a handler may block (on the database) without stalling any other connection. With a
/// pool of threads each polling a set of connections, a blocked handler held up the rest of its set, and MHD hands a
/// worker up to 10 connections per accept: wrk's 16 connections landed on 3 of 16 workers, which served 3 requests at
/// a time.
public final class HTTPServer: @unchecked Sendable {
    /// The port the server listens on: the real one when it was started on port 0.
    public let port: UInt16

    private let context: ServerContext
    private let lock = NSLock()
    /// The running daemon, nil once shut down. Guarded by `lock`.
    private var daemon: OpaquePointer?
    /// Accepts the connections in place of the daemon when `clientAddresses.requiresProxyProtocol`.
    private let proxyListener: ProxyProtocolListener?

    /// Binds and starts serving at once. `port` 0 picks an ephemeral port (read `port`).
    /// `admit` sees each request's head (an empty body) before its body is read: an answer it gives refuses the
    /// request unread. MHD's own error messages (e.g. "connection limit reached") and the connections closed
    /// for a slow head go to `diagnostics`, standard error when nil, each kind at most once per 10 s; so do
    /// connections refused for their PROXY header and `X-Forwarded-For` ignored from untrusted peers
    /// (`clientAddresses`).
    public init(
        host: String, port: UInt16, limits: HTTPServerLimits = .init(),
        clientAddresses: ClientAddressPolicy = .init(),
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        admit: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        diagnostics: (@Sendable (String) -> Void)? = nil
    ) throws(HTTPServerError) {
        var address = try Self.socketAddress(host: host, port: port)
        let context = ServerContext(
            limits: limits, clientAddresses: clientAddresses, reject: reject, admit: admit, handler: handler,
            diagnostics: diagnostics)
        var flags =
            MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue
            | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
        if address.ss_family == sa_family_t(AF_INET6) { flags |= MHD_USE_IPv6.rawValue }
        let proxyListener =
            clientAddresses.requiresProxyProtocol
            ? try ProxyProtocolListener(
                address: address, host: host, policy: clientAddresses,
                timeout: .seconds(max(1, limits.requestHeadTimeoutSeconds)), maxWaiting: limits.connectionLimit,
                report: { [weak context] in context?.record(diagnostic: $0) }) : nil
        if proxyListener != nil { flags |= MHD_USE_NO_LISTEN_SOCKET.rawValue }
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                loyalty_MHD_start_daemon(
                    flags, address, accessHandler, contextPointer, requestCompleted, contextPointer,
                    logMessage, contextPointer, connectionNotified, contextPointer, targetArrived, contextPointer,
                    UInt32(clamping: limits.connectionLimit),
                    UInt32(clamping: max(0, limits.connectionsPerClientAddress)), max(0, limits.memoryPerConnection),
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
        self.proxyListener = proxyListener
        self.port = proxyListener?.port ?? loyalty_MHD_bound_port(started)
        context.deadlines.startWatching(
            answerLateBody: { [weak context] socket in
                guard let context else { return }
                writeDirectly(context.reject(.bodyTooSlow), toSocket: socket)
            },
            report: { [weak context] in context?.record(diagnostic: $0) })
        let daemonAddress = UInt(bitPattern: started)
        proxyListener?.start { socket, client in
            var client = client
            let length = socketAddressLength(client)
            // On failure (the connection limit, no memory) MHD closes the socket and says why in its log.
            _ = withUnsafePointer(to: &client) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    MHD_add_connection(OpaquePointer(bitPattern: daemonAddress), socket, $0, length)
                }
            }
        }
    }

    deinit {
        proxyListener?.stop()
        if let daemon {
            context.isDraining.store(true, ordering: .sequentiallyConsistent)
            context.waitForDirectAnswersToSettle()
            MHD_stop_daemon(daemon)
        }
        context.deadlines.stopWatching()
    }

    /// Stops accepting connections, waits up to `gracePeriod` for the requests in flight to be
    /// answered (telling their clients to close), then stops the daemon. Idempotent.
    public func shutdown(gracePeriod: Duration = .seconds(30)) {
        let daemon: OpaquePointer? = lock.withLock {
            defer { self.daemon = nil }
            return self.daemon
        }
        guard let daemon else { return }
        context.isDraining.store(true, ordering: .sequentiallyConsistent)
        proxyListener?.stop()
        let listenSocket = MHD_quiesce_daemon(daemon)
        context.waitForRequestsInFlight(gracePeriod: gracePeriod)
        context.waitForDirectAnswersToSettle()
        MHD_stop_daemon(daemon)
        // MHD hands the listening socket back on quiesce and closes it no more.
        if listenSocket >= 0 { close(listenSocket) }
        context.deadlines.stopWatching()
        context.flushDiagnostics()
    }

    /// Fails as `init` would when `host:port` cannot be bound (taken by another process, not this machine's,
    /// privileged): for a caller with slow work to do before it starts serving.
    public static func checkAvailable(host: String, port: UInt16) throws(HTTPServerError) {
        var address = try socketAddress(host: host, port: port)
        let descriptor = socket(Int32(address.ss_family), Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else {
            throw .couldNotStart(host: host, port: port, detail: errorText())
        }
        defer { close(descriptor) }
        // As MHD binds: a port left in TIME_WAIT by a previous run is free.
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(
            address.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            throw .couldNotStart(host: host, port: port, detail: errorText())
        }
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
final class ServerContext: @unchecked Sendable {
    let maxBodyBytes: Int
    let maxBodyBytesByPath: [String: Int]
    /// An oversized chunked body is read and dropped so the client gets its 413; past this many
    /// dropped bytes the sender is cut off instead.
    let maxDiscardedBytes: Int
    let maxQueryParameters: Int
    /// What the bodies of the requests in flight hold (reserved at their Content-Length, or chunk by chunk).
    let bodies: ByteBudget
    /// What the answers queued and not yet sent hold, each from its queueing until its request completes.
    let answers: ByteBudget
    let reject: @Sendable (HTTPRejection) -> HTTPResponse
    let admit: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let diagnostics: (@Sendable (String) -> Void)?
    let clientAddresses: ClientAddressPolicy
    let isDraining = Atomic<Bool>(false)
    let deadlines: ReceiveDeadlines

    private let condition = NSCondition()
    /// Requests the access handler has seen and MHD has not yet reported complete. Guarded by `condition`.
    private var requestsInFlight = 0
    private var lastMessage: String?
    /// Per message, when it was last passed on and how many like it were held back since. Guarded by `condition`.
    private var shownMessages: [String: (at: ContinuousClock.Instant, heldBack: Int)] = [:]
    /// A thousand refused connections make one line, not a thousand.
    private static let diagnosticInterval = Duration.seconds(10)

    init(
        limits: HTTPServerLimits, clientAddresses: ClientAddressPolicy,
        reject: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        admit: (@Sendable (HTTPRequest) -> HTTPResponse?)?,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, diagnostics: (@Sendable (String) -> Void)?
    ) {
        self.maxBodyBytes = max(0, limits.maxBodyBytes)
        self.maxBodyBytesByPath = limits.maxBodyBytesByPath
        self.maxDiscardedBytes = max(4 * self.maxBodyBytes, 1 << 20)
        self.bodies = ByteBudget(limit: limits.maxBodyBytesInFlight)
        self.answers = ByteBudget(limit: limits.maxAnswerBytesInFlight)
        self.maxQueryParameters = max(0, min(limits.maxQueryParameters, limits.memoryPerConnection / 256))
        self.reject = reject
        self.admit = admit
        self.clientAddresses = clientAddresses
        self.handler = handler
        self.diagnostics = diagnostics
        self.deadlines = ReceiveDeadlines(
            headTimeout: .seconds(max(1, limits.requestHeadTimeoutSeconds)),
            minimumBodyBytesPerSecond: limits.minimumBodyBytesPerSecond)
    }

    var lastDiagnostic: String? { condition.withLock { lastMessage } }

    /// Passes `message` on unless the same text was passed on less than `diagnosticInterval` ago; then it is
    /// counted, and the count goes with the next one passed on.
    func record(diagnostic message: String) {
        let now = ContinuousClock.now
        let heldBack: Int? = condition.withLock {
            lastMessage = message
            if let shown = shownMessages[message], now - shown.at < Self.diagnosticInterval {
                shownMessages[message]?.heldBack += 1
                return nil
            }
            if shownMessages.count > 100 {
                shownMessages = shownMessages.filter { now - $0.value.at < Self.diagnosticInterval }
            }
            defer { shownMessages[message] = (now, 0) }
            return shownMessages[message]?.heldBack ?? 0
        }
        guard let heldBack else { return }
        emit(heldBack == 0 ? message : "\(message) (and \(heldBack) more like it in the last 10 s or longer)")
    }

    /// The counts of messages held back since they were last passed on: at shutdown, so none is lost.
    func flushDiagnostics() {
        let held = condition.withLock {
            defer { shownMessages = [:] }
            return shownMessages.filter { $0.value.heldBack > 0 }.map { ($0.key, $0.value.heldBack) }
        }
        for (message, count) in held.sorted(by: { $0.0 < $1.0 }) {
            emit("\(message) (\(count) more like it since it was last logged)")
        }
    }

    private func emit(_ message: String) {
        if let diagnostics {
            diagnostics(message)
        } else {
            FileHandle.standardError.write(Data("libmicrohttpd: \(message)\n".utf8))
        }
    }

    /// When `mayAnswerDirectly` last said yes (DispatchTime's nanoseconds), 0 for never.
    private let lastDirectAnswer = Atomic<UInt64>(0)
    /// MHD 0.9.75 crashes (a NULL response in its connection thread) when the daemon stops within about a
    /// millisecond of a connection whose answer failed to send, as one answered directly does: stopping waits
    /// this long after the last.
    private static let directAnswerSettling: UInt64 = 200_000_000

    /// Whether a connection's answer may be written outside MHD now: not while the server drains. The time is
    /// noted before draining is read, and `waitForDirectAnswersToSettle` reads it after draining is set, so either
    /// the stop waits for this answer or this answer is not written.
    func mayAnswerDirectly() -> Bool {
        lastDirectAnswer.store(DispatchTime.now().uptimeNanoseconds, ordering: .sequentiallyConsistent)
        return !isDraining.load(ordering: .sequentiallyConsistent)
    }

    /// Before the daemon stops (with `isDraining` set).
    func waitForDirectAnswersToSettle() {
        let last = lastDirectAnswer.load(ordering: .sequentiallyConsistent)
        guard last > 0 else { return }
        let settled = last + Self.directAnswerSettling
        let now = DispatchTime.now().uptimeNanoseconds
        if now < settled { usleep(useconds_t((settled - now) / 1000)) }
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

/// One request's state between the access handler's calls, kept in MHD's `*con_cls`. Made by the access handler's
/// first call, or before it when the request target is refused.
private final class RequestState {
    /// The access handler has seen the head (and counted the request in flight).
    var headSeen = false
    /// Set by `targetArrived` only when they are too many, and MHD was left none of them to parse.
    var queryParameters = 0
    var body: [UInt8] = []
    var maxBodyBytes = 0
    /// Answered before the whole body was read (too large, refused from its head, no room): the rest is dropped.
    var isRefused = false
    var discardedBytes = 0
    /// What this request holds of `ServerContext.bodies`, given back when it completes.
    var reservedBytes = 0
    /// What its answer holds of `ServerContext.answers`, given back when it completes (sent, or its connection
    /// closed).
    var answerBytes = 0
    /// The request's head, read from MHD once, when it is in: `admit` sees it, and the handler gets it with the body.
    var head: HTTPRequest?
}

/// Called once when the headers are in, once per body chunk, and once more at the end of the body;
/// a response may be queued only on the first or the last call.
private let accessHandler: MHD_AccessHandlerCallback = {
    contextPointer, connection, url, method, version, uploadData, uploadDataSize, requestPointer in
    guard let contextPointer, let connection, let uploadDataSize, let requestPointer else {
        return MHD_Result.NO
    }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()

    let state: RequestState
    if let statePointer = requestPointer.pointee {
        state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()
    } else {
        state = RequestState()
        requestPointer.pointee = Unmanaged.passRetained(state).toOpaque()
    }

    guard state.headSeen else {
        state.headSeen = true
        pthread_setspecific(connectionReadingItsHead, nil)
        context.requestStarted()
        context.deadlines.headArrived(connection)
        if state.queryParameters > context.maxQueryParameters {
            state.isRefused = true
            return queue(
                context.reject(.tooManyQueryParameters(limit: context.maxQueryParameters)), on: connection, context,
                closing: true)
        }
        state.maxBodyBytes = url.flatMap { context.maxBodyBytesByPath[String(cString: $0)] } ?? context.maxBodyBytes
        let requestHead = head(of: connection, url: url, method: method, client: client(of: connection, context))
        state.head = requestHead
        // MHD has framed the request by now; refusing it here, before the body, is the only place left.
        // Each refusal is queued before the body is read: MHD drops the body and closes the connection.
        let framing = FramingHeaders(of: connection, method: method, version: version)
        if let problem = framing.problem {
            return queue(context.reject(.malformedFraming(problem)), on: connection, context, closing: true)
        }
        let length = framing.contentLengths.first.flatMap { Int($0) }
        if let length, length > state.maxBodyBytes {
            state.isRefused = true
            return queue(
                context.reject(.bodyTooLarge(limit: state.maxBodyBytes)), on: connection, context, closing: true)
        }
        if let admit = context.admit, let refusal = admit(requestHead) {
            state.isRefused = true
            return queue(
                refusal, on: connection, context, closing: (length ?? 0) > 0 || !framing.transferEncodings.isEmpty)
        }
        if let length, length > 0 {
            guard context.bodies.take(length) else {
                state.isRefused = true
                return queue(context.reject(.busy), on: connection, context, closing: true)
            }
            state.reservedBytes = length
            state.body.reserveCapacity(length)
        }
        if (length ?? 0) > 0 || !framing.transferEncodings.isEmpty {
            context.deadlines.bodyExpected(connection, bytes: length ?? state.maxBodyBytes)
        }
        return MHD_Result.YES
    }

    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        uploadDataSize.pointee = 0
        // A chunked body takes its share of the budget as it comes.
        let growth = state.body.count + chunkSize - state.reservedBytes
        let rejection: HTTPRejection? =
            state.isRefused ? nil
            : state.body.count + chunkSize > state.maxBodyBytes ? .bodyTooLarge(limit: state.maxBodyBytes)
            : growth > 0 && !context.bodies.take(growth) ? .busy : nil
        if growth > 0 && rejection == nil && !state.isRefused { state.reservedBytes += growth }
        if let rejection {
            state.isRefused = true
            state.body = []
            // MHD 0.9.75 takes no response while it hands over a body (MHD_queue_response wants the state
            // before or after it), so the answer is written to the socket now and its sending side shut: the
            // client reads it while it still sends. The rest is dropped; told NO at the end, MHD closes.
            writeDirectly(context.reject(rejection), toSocket: loyalty_MHD_connection_socket(connection))
            context.deadlines.bodyRefused(connection)
        }
        if state.isRefused {
            state.discardedBytes += chunkSize
            return state.discardedBytes > context.maxDiscardedBytes ? MHD_Result.NO : MHD_Result.YES
        }
        state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: chunkSize))
        return MHD_Result.YES
    }

    context.deadlines.bodyArrived(connection)
    if state.isRefused { return MHD_Result.NO }  // answered already
    guard var request = state.head.take() else { return MHD_Result.NO }  // the first call made it
    swap(&request.body, &state.body)
    let queued = answer(request, on: connection, state, context)
    // What the handler built is freed by now (MHD holds its copy of the answer): a large answer's memory goes
    // back to the system, where glibc would keep it in the thread's own arena.
    if state.answerBytes >= largeAnswerBytes { malloc_trim(0) }
    return queued
}

/// Answers at least this long are followed by `malloc_trim`.
private let largeAnswerBytes = 1 << 20

/// Runs the handler and queues its answer, or the refusal when the unsent answers hold their budget.
private func answer(
    _ request: HTTPRequest, on connection: OpaquePointer, _ state: RequestState, _ context: ServerContext
) -> MHD_Result {
    let response = context.handler(request).gzipped(for: request)
    // The body is done with: its share of the budget goes back before the answer is sent, so a client that has
    // read the answer finds the room free (MHD calls requestCompleted only after the answer is written).
    context.bodies.give(state.reservedBytes)
    state.reservedBytes = 0
    // The answer is held until its client has read it: clients that ask for large answers and never read them
    // hold no more than the answers' budget together, however many they are.
    guard context.answers.take(response.body.count) else {
        return queue(context.reject(.answersBusy), on: connection, context)
    }
    state.answerBytes = response.body.count
    return queue(response, on: connection, context)
}

/// The request as far as its head tells: no body.
private func head(
    of connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, client: String
) -> HTTPRequest {
    HTTPRequest(
        method: method.map { String(cString: $0) } ?? "GET",
        path: url.map { String(cString: $0) } ?? "/",
        query: values(of: connection, .GET_ARGUMENT_KIND, lowercasingNames: false),
        headers: values(of: connection, .HEADER_KIND, lowercasingNames: true),
        remoteAddress: client)
}

private let requestCompleted: MHD_RequestCompletedCallback = {
    contextPointer, connection, requestPointer, _ in
    guard let contextPointer, let statePointer = requestPointer?.pointee else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()
    let retained = Unmanaged<RequestState>.fromOpaque(statePointer)
    let state = retained.takeUnretainedValue()
    context.bodies.give(state.reservedBytes)
    context.answers.give(state.answerBytes)
    if state.answerBytes >= largeAnswerBytes { malloc_trim(0) }
    retained.release()
    requestPointer?.pointee = nil
    // A refused target whose connection ended before its head was in never reached the access handler.
    guard state.headSeen else { return }
    if let connection { context.deadlines.answered(connection) }
    context.requestFinished()
}

/// The request target before MHD parses its query (it is the request line, whole): too many parameters are cut off
/// here, so MHD's memory holds, and the access handler refuses the request from the state made for it.
private let targetArrived: loyalty_MHD_URILogCallback = { contextPointer, target, connection in
    guard let contextPointer, let target else { return nil }
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()
    if let connection {
        context.deadlines.requestLineArrived(connection)
        pthread_setspecific(connectionReadingItsHead, UnsafeRawPointer(connection))
    }
    let parameters = loyalty_MHD_count_query_parameters(target, context.maxQueryParameters)
    guard parameters > context.maxQueryParameters else { return nil }
    let state = RequestState()
    state.queryParameters = parameters
    return Unmanaged.passRetained(state).toOpaque()
}

/// What holds for all of a connection's requests, worked out once when it opens (MHD's socket context).
private final class ConnectionState {
    /// The peer's address as text: a keep-alive connection's requests need not format it each.
    let peer: String

    init(peer: String) { self.peer = peer }
}

private let connectionNotified: MHD_NotifyConnectionCallback = { contextPointer, connection, socketContext, event in
    guard let contextPointer, let connection else { return }
    let deadlines = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue().deadlines
    if event == .CONNECTION_NOTIFY_STARTED {
        deadlines.opened(connection)
        socketContext?.pointee = Unmanaged.passRetained(ConnectionState(peer: peerAddress(of: connection))).toOpaque()
    } else {
        deadlines.closed(connection)
        if let state = socketContext?.pointee { Unmanaged<ConnectionState>.fromOpaque(state).release() }
        socketContext?.pointee = nil
    }
}

/// The connection's peer as text: the client a PROXY header named when the listener requires one (it hands MHD
/// that address).
private func peerAddress(of connection: OpaquePointer) -> String {
    loyalty_MHD_client_address(connection).flatMap(IPAddress.init)?.description ?? ""
}

/// The connection whose request head this thread is reading, from its request line until the access handler sees the
/// head: each connection has a thread of its own (MHD_USE_THREAD_PER_CONNECTION), and MHD's log callback, which is
/// not told the connection, runs on it.
private let connectionReadingItsHead: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

private let logMessage: MHD_LogCallback = { contextPointer, format, arguments in
    guard let contextPointer, let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    _ = vsnprintf(&buffer, buffer.count, format, arguments)
    let message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        .trimmingCharacters(in: .whitespacesAndNewlines)
    let context = Unmanaged<ServerContext>.fromOpaque(contextPointer).takeUnretainedValue()
    if let rejection = contentLengthRejection(message, context),
        let connection = pthread_getspecific(connectionReadingItsHead), context.mayAnswerDirectly()
    {
        // MHD 0.9.75 answers a Content-Length it cannot read (-1, 2x, "2, 2", past 2^64) before the access handler
        // runs, and then writes the same head a second time: two answers to one request. Ours goes first, and the
        // sending side is shut, so MHD's own fails to send and MHD closes the connection.
        writeDirectly(context.reject(rejection), toSocket: loyalty_MHD_connection_socket(OpaquePointer(connection)))
    }
    context.record(diagnostic: message)
}

/// `closing`: the request's framing or body was refused, so the connection ends after this answer.
private func queue(
    _ response: HTTPResponse, on connection: OpaquePointer, _ context: ServerContext, closing: Bool = false
) -> MHD_Result {
    let created = response.body.withUnsafeBytes {
        MHD_create_response_from_buffer(
            $0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let created else { return MHD_Result.NO }
    defer { MHD_destroy_response(created) }
    for (name, value) in response.headers where !name.isHeaderName("content-length") {
        // MHD refuses names and values with line breaks: such a header is dropped, not sent. withCString: a short
        // name or value passed as a String would be copied to the heap first.
        _ = name.withCString { name in value.withCString { MHD_add_response_header(created, name, $0) } }
    }
    if closing || context.isDraining.load(ordering: .relaxed) {
        _ = MHD_add_response_header(created, "Connection", "close")
    }
    let status = (100...999).contains(response.status) ? UInt32(response.status) : 500
    return MHD_queue_response(connection, status, created)
}

/// The request's client: the connection's peer (the client a PROXY header named, if the listener requires one),
/// or whom a trusted proxy's `X-Forwarded-For` names. Says when an untrusted peer sent `X-Forwarded-For`.
private func client(of connection: OpaquePointer, _ context: ServerContext) -> String {
    let peer =
        loyalty_MHD_socket_context(connection).map {
            Unmanaged<ConnectionState>.fromOpaque($0).takeUnretainedValue().peer
        } ?? peerAddress(of: connection)
    // Every X-Forwarded-For line, in order: a proxy may add its own line after one the client sent. Most requests
    // have none, and the lookup of the first spares them collecting every header.
    let forwardedFor =
        MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Forwarded-For") == nil
        ? nil : values(of: connection, .HEADER_KIND, lowercasingNames: true)["x-forwarded-for"]
    let (client, ignoredForwarding) = context.clientAddresses.client(peer: peer, forwardedFor: forwardedFor)
    if ignoredForwarding {
        context.record(
            diagnostic:
                "ignored X-Forwarded-For from \(peer), which is not a trusted proxy: its requests count as its own")
    }
    return client
}
