import HTTPServer
import LoyaltyAPI

/// The operator's routes: health, readiness and metrics for the balancer and the monitoring, the API's
/// document, and registering retailers.
extension Endpoints {
    var operationsRoutes: [Route] {
        [
            Route("GET", "/healthz") { _ in .json(200, ["status": "ok"], headers: Self.uncached) },
            Route("GET", "/readyz", readiness),
            Route("GET", "/metrics", operatorToken, metricsText),
            Route("GET", "/openapi.yaml") { [openAPIDocument] _ in
                HTTPResponse(status: 200, headers: ["Content-Type": "application/yaml"], body: openAPIDocument)
            },
            Route("POST", "/v1/retailers", operatorToken, registerRetailer),
        ]
    }

    /// A balancer's or a monitor's cached answer would hide a change of state.
    static let uncached = ["Cache-Control": "no-store"]

    func readiness(_ request: HTTPRequest) throws -> HTTPResponse {
        if database.isReady() { return .json(200, ["status": "ready"], headers: Self.uncached) }
        // Every instance on this database is in the same state: taking them all out of the balancer would
        // refuse the reads they can still answer.
        guard database.standbyIsFit() else { throw APIFailure.databaseUnavailable }
        return .json(200, ["status": "reads_only"], headers: Self.uncached)
    }

    func metricsText(_ request: HTTPRequest, _: Void) throws -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; version=0.0.4"],
            body: Array(
                metrics.exposition(
                    pool: database.connectionPoolUsage, poolSize: database.connectionPoolSize,
                    standbys: database.standbyReads?.usage,
                    // A database that does not answer leaves these out; the rest still helps to see why.
                    catalog: try? database.catalogSize()
                ).utf8) + Array((database.catalogCheck?.exposition() ?? "").utf8) + Array(rateLimiter.exposition().utf8))
    }

    func registerRetailer(_ request: HTTPRequest, _: Void) throws -> HTTPResponse {
        let registration = try request.decodeBody(RetailerRegistration.self)
        return .json(201, try database.registerRetailer(registration))
    }
}
