import HTTPServer

/// One route of the API, declared once: its method and path, who may call it, and the body it may bring. The
/// service checks the caller's credential before the handler runs, and hands the handler the caller it found;
/// the open routes, the body limits by path and the check that openapi.yaml agrees are all read from these.
struct Route: Sendable {
    let method: String
    let pattern: String
    let caller: CallerKind
    /// Bytes of body over the HTTP server's usual limit (an import's CSV); nil: the usual limit.
    let maxBodyBytes: Int?
    /// Checks the credential, then runs the handler with the caller it names.
    let respond: @Sendable (HTTPRequest) throws -> HTTPResponse
    /// Checks the credential alone: for a request whose body is not read yet.
    let checkCaller: @Sendable (HTTPRequest) throws -> Void

    init<Caller>(
        _ method: String, _ pattern: String, _ credential: Credential<Caller>, maxBodyBytes: Int? = nil,
        _ handler: @escaping @Sendable (HTTPRequest, Caller) throws -> HTTPResponse
    ) {
        (self.method, self.pattern, caller, self.maxBodyBytes) = (method, pattern, credential.kind, maxBodyBytes)
        respond = { request in try handler(request, try credential.check(request)) }
        checkCaller = { request in _ = try credential.check(request) }
    }

    /// A route anyone may call.
    init(_ method: String, _ pattern: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        self.init(method, pattern, Credential.anyone) { request, _ in try handler(request) }
    }

    /// "METHOD pattern", as openapi.yaml and the metrics name a route.
    var name: String { "\(method) \(pattern)" }
}

/// Who may call a route.
enum CallerKind: String, Sendable, CaseIterable {
    case anyone
    /// The operator token.
    case `operator`
    /// A retailer's API key, or its console session.
    case retailer
    /// A till key, or the retailer's console session.
    case till
    /// A shopper's device token.
    case device
    /// The console's session cookie alone.
    case console
}

/// How a route's caller proves who it is, and what the handler then knows of it.
struct Credential<Caller>: Sendable {
    let kind: CallerKind
    /// The caller of a request, or the 401 or 403 (or 429) that refuses it.
    let check: @Sendable (HTTPRequest) throws -> Caller
}

extension Credential where Caller == Void {
    static var anyone: Credential { Credential(kind: .anyone) { _ in } }
}
