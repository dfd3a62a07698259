import Foundation
import Synchronization

/// Request counts by route, method and status, a latency histogram by route, and the database pool,
/// in the Prometheus text exposition format (version 0.0.4).
final class Metrics: Sendable {
    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private struct Histogram {
        var bucketCounts: [Int]
        var sum: Double = 0
        var count = 0
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Histogram] = [:]
    }

    /// Upper bounds in seconds, from a loopback cache hit to a slow full catalog.
    private static let bucketBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
    ]
    private let state = Mutex(State())

    func record(route: String, method: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            var histogram =
                state.latency[route] ?? Histogram(bucketCounts: Array(repeating: 0, count: Self.bucketBounds.count))
            for (index, bound) in Self.bucketBounds.enumerated() where seconds <= bound {
                histogram.bucketCounts[index] += 1
            }
            histogram.sum += seconds
            histogram.count += 1
            state.latency[route] = histogram
        }
    }

    func exposition(poolInUse: Int, poolSize: Int) -> String {
        let state = state.withLock { $0 }
        var text = """
            # HELP loyalty_http_requests_total HTTP requests answered, by route pattern, method and status.
            # TYPE loyalty_http_requests_total counter

            """
        for (key, count) in state.requests.sorted(by: {
            ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
        }) {
            text +=
                "loyalty_http_requests_total{route=\"\(escaped(key.route))\",method=\"\(escaped(key.method))\",status=\"\(key.status)\"} \(count)\n"
        }
        text += """
            # HELP loyalty_http_request_duration_seconds Time from request to answer, by route pattern.
            # TYPE loyalty_http_request_duration_seconds histogram

            """
        for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
            let label = "route=\"\(escaped(route))\""
            for (index, bound) in Self.bucketBounds.enumerated() {
                text +=
                    "loyalty_http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(histogram.bucketCounts[index])\n"
            }
            text += "loyalty_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(histogram.count)\n"
            text += "loyalty_http_request_duration_seconds_sum{\(label)} \(histogram.sum)\n"
            text += "loyalty_http_request_duration_seconds_count{\(label)} \(histogram.count)\n"
        }
        text += """
            # HELP loyalty_db_pool_connections_in_use Database connections lent out right now.
            # TYPE loyalty_db_pool_connections_in_use gauge
            loyalty_db_pool_connections_in_use \(poolInUse)
            # HELP loyalty_db_pool_connections Size of the database connection pool.
            # TYPE loyalty_db_pool_connections gauge
            loyalty_db_pool_connections \(poolSize)

            """
        return text
    }

    private func escaped(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
