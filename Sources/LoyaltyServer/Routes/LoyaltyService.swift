import Foundation
import HTTPServer
import LoyaltyAPI
import Synchronization

/// The HTTP API on top of a `Database`: routing, authentication, error answers, metrics and
/// one log line per request. Give `handle` and `reject` to an `HTTPServer`.
public final class LoyaltyService: Sendable {
    private let router: Router
    /// Each route by "METHOD pattern".
    private let routes: [String: Route]
    private let metrics: Metrics
    private let log: @Sendable (String) -> Void

    /// `log` receives one `ServerLog` line per request; it never contains a token.
    public init(
        database: Database, operatorToken: String, openAPIDocument: [UInt8], beaconKeyring: BeaconKeyring,
        rateLimits: RateLimits = .standard, log: @escaping @Sendable (String) -> Void = ServerLog.standardError
    ) {
        let metrics = Metrics()
        let endpoints = Endpoints(
            database: database, operatorTokenDigest: Secrets.digest(of: operatorToken), openAPIDocument: openAPIDocument,
            beaconKeyring: beaconKeyring,
            secureBeacons: SecureBeaconTable(database: database, keyring: beaconKeyring), metrics: metrics, rateLimiter: RateLimiter(rateLimits),
            log: log)
        var router = Router()
        var routes: [String: Route] = [:]
        // What the operator and retailers write may change the catalog: this server's own next check sees it
        // without waiting for the notification (CatalogCheck).
        let catalogWriters: Set<CallerKind> = [.operator, .retailer, .console]
        for route in endpoints.routes {
            var handler = route.respond
            if route.method != "GET" && catalogWriters.contains(route.caller) {
                handler = { request in
                    defer { database.catchUpCatalogCheck() }
                    return try route.respond(request)
                }
            }
            let respond = handler
            router.add(route.method, route.pattern) { request in
                Self.answer(request, route: route.pattern, metrics: metrics, log: log, handler: respond)
            }
            routes[route.name] = route
        }
        self.router = router
        self.routes = routes
        self.metrics = metrics
        self.log = log
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let metrics = metrics
        let log = log
        return router.respond(
            to: request,
            notFound: { request in
                Self.answer(request, route: "unmatched", metrics: metrics, log: log) { request throws(APIFailure) in
                    throw APIFailure(404, .notFound, "no route \(request.answeredMethod) \(request.path); see /openapi.yaml")
                }
            },
            methodNotAllowed: { request, allowed in
                Self.answer(request, route: "unmatched", metrics: metrics, log: log) { request throws(APIFailure) in
                    throw APIFailure(
                        405, .methodNotAllowed,
                        "\(request.path) answers \(allowed.joined(separator: ", ")), not \(request.answeredMethod)")
                }
            })
    }

    /// The routes that take more than the HTTP server's usual body limit (an import), by path: for its limits.
    public var maxBodyBytesByPath: [String: Int] {
        routes.values.reduce(into: [:]) { limits, route in
            if let limit = route.maxBodyBytes { limits[route.pattern] = limit }
        }
    }

    /// Refuses a request with a body from its head, before the body is read (give it to `HTTPServer` as `admit`):
    /// a route that needs a credential asked without one, and a large body (an import) whose credential does
    /// not let it in. So no one without a key makes the server hold a body.
    public func admit(_ head: HTTPRequest) -> HTTPResponse? {
        let announcesBody = (head.header("content-length").flatMap { Int($0) } ?? 0) > 0
            || head.header("transfer-encoding") != nil
        guard announcesBody, let pattern = router.pattern(method: head.method, path: head.path),
            let route = routes["\(head.method) \(pattern)"], route.caller != .anyone
        else { return nil }
        let refusal: (any Error)?
        if head.bearerToken == nil && head.consoleSessionToken == nil {
            refusal = APIFailure.unauthorized
        } else if route.maxBodyBytes != nil {
            do {
                try route.checkCaller(head)
                refusal = nil
            } catch {
                refusal = error
            }
        } else {
            return nil
        }
        guard let refusal else { return nil }
        return Self.answer(head, route: pattern, metrics: metrics, log: log) { _ in throw refusal }
    }

    /// The answer to a request the HTTP server refused before reading it (a body over the limit, a head that
    /// proxies could read differently, no room for its body).
    public func reject(_ rejection: HTTPRejection) -> HTTPResponse {
        switch rejection {
        case .bodyTooLarge(let limit):
            metrics.record(route: "rejected", method: "-", status: 413, seconds: 0)
            return .failure(
                APIFailure(413, .payloadTooLarge, "the body is over the limit of \(limit) bytes; send less"))
        case .malformedFraming(let problem):
            metrics.record(route: "rejected", method: "-", status: 400, seconds: 0)
            return .failure(APIFailure(400, .badRequest, "the request's head is malformed (RFC 9112): \(problem)"))
        case .busy, .answersBusy:
            metrics.record(route: "rejected", method: "-", status: 503, seconds: 0)
            let held = rejection == .busy ? "request bodies" : "unsent answers"
            var failure = APIFailure(
                503, .serverBusy, "the server holds as many \(held) as it may; retry in a few seconds")
            failure.headers["Retry-After"] = "5"
            return .failure(failure)
        case .tooManyQueryParameters(let limit):
            metrics.record(route: "rejected", method: "-", status: 414, seconds: 0)
            return .failure(
                APIFailure(414, .badRequest, "the request has more than \(limit) query parameters; send fewer"))
        case .bodyTooSlow:
            metrics.record(route: "rejected", method: "-", status: 408, seconds: 0)
            return .failure(
                APIFailure(408, .requestTimeout, "the body came too slowly and was dropped; send it again, faster"))
        }
    }

    /// Runs a handler, turns what it throws into the JSON error answer, and records the request.
    private static func answer(
        _ request: HTTPRequest, route: String, metrics: Metrics, log: @Sendable (String) -> Void,
        handler: (HTTPRequest) throws -> HTTPResponse
    ) -> HTTPResponse {
        let started = ContinuousClock.now
        let requestID =
            request.header("x-request-id").flatMap(Self.acceptableRequestID)
            ?? Self.nextRequestID()
        var internalDetail: String?
        var response: HTTPResponse
        do {
            response = try handler(request)
        } catch {
            let answer = APIFailure.answering(error)
            internalDetail = answer.internalDetail
            response = .failure(answer.failure)
        }
        response.headers["X-Request-Id"] = requestID
        // A signed-in answer is the caller's own (offers, keys, an export): no cache keeps it, unless the handler
        // chose otherwise (the catalog's no-cache, revalidated by its ETag). Any credential counts, even one not
        // taken.
        if request.header("authorization") != nil || request.consoleSessionToken != nil,
            !response.headers.keys.contains(where: { $0.isHeaderName("cache-control") })
        {
            response.headers["Cache-Control"] = "no-store"
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.record(route: route, method: request.method, status: response.status, seconds: seconds)
        let level: ServerLog.Level = response.status >= 500 ? .error : internalDetail != nil ? .warning : .info
        log(
            ServerLog.line(
                level, "request",
                [
                    "request_id": .string(requestID), "method": .string(request.method), "route": .string(route),
                    "client": .string(request.remoteAddress), "status": .int(response.status), "duration_ms": .double((seconds * 1e6).rounded() / 1e3),
                    "error": internalDetail.map { .string($0) },
                ]))
        return response
    }

    /// An id only needs to be unique, not secret: a random prefix per process (so restarts and other instances
    /// differ) and a counter, 16 characters as 12 random bytes were, without a getrandom(2) per request.
    private static let requestIDPrefix = Secrets.base64URL(Secrets.randomBytes(6))
    private static let requestCount = Atomic<UInt64>(0)

    private static func nextRequestID() -> String {
        let count = requestCount.add(1, ordering: .relaxed).newValue
        return requestIDPrefix + Secrets.base64URL((0..<6).reversed().map { UInt8(truncatingIfNeeded: count >> (8 * $0)) })
    }

    /// A caller's request id is echoed only when it is short and plain, so it cannot forge log lines.
    private static func acceptableRequestID(_ text: String) -> String? {
        text.count <= 64 && text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            && !text.isEmpty ? text : nil
    }
}

extension HTTPRequest {
    /// The method whose answer this request gets: HEAD gets GET's, without the body, so it announces the same
    /// length (RFC 9110 section 9.3.2).
    fileprivate var answeredMethod: String { method == "HEAD" ? "GET" : method }
}
