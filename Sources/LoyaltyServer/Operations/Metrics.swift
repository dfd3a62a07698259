import Foundation
import Postgres
import Synchronization

/// The catalog's size, for /metrics.
struct CatalogSize: Equatable {
    var liveOffers: Int
    var liveStores: Int
    var retailers: Int
    var feedVersion: Int64
}

/// Request counts by route, method and status, a latency histogram by route, the database pool (and how long
/// callers waited for it) and the catalog's size, in the Prometheus text exposition format (version 0.0.4).
/// docs/OPERATIONS.md describes each metric.
final class Metrics: Sendable {
    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private struct Histogram {
        var bucketCounts = [Int](repeating: 0, count: Metrics.bucketBounds.count)
        var sum: Double = 0
        var count = 0

        mutating func record(_ seconds: Double) {
            for (index, bound) in Metrics.bucketBounds.enumerated() where seconds <= bound {
                bucketCounts[index] += 1
            }
            sum += seconds
            count += 1
        }

        mutating func add(_ other: Histogram) {
            for index in bucketCounts.indices { bucketCounts[index] += other.bucketCounts[index] }
            sum += other.sum
            count += other.count
        }
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Histogram] = [:]
    }

    private final class Stripe: Sendable {
        let state = Mutex(State())
    }

    /// Upper bounds in seconds, from a loopback cache hit to a slow full catalog.
    private static let bucketBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
    ]
    /// Every handler thread records every request: with one lock, a perf profile of the 304 path showed
    /// its slow (contended) path as the server's top symbol. Each thread records into the stripe its id
    /// hashes to, so threads rarely share a lock; a scrape adds the stripes up.
    private let stripes = (0..<16).map { _ in Stripe() }
    /// Resolved sightings refused because the account could not have travelled there (`JourneyRule`).
    private let impossibleJourneys = Atomic<Int>(0)

    func recordImpossibleJourney() {
        impossibleJourneys.add(1, ordering: .relaxed)
    }

    /// Method labels: the client names its method, so any other is counted as `other`; the routes come
    /// from the route table and fixed words ("unmatched", "rejected"), so no label grows with what clients send.
    private static let methodLabels: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "-"]

    func record(route: String, method: String, status: Int, seconds: Double) {
        let method = Self.methodLabels.contains(method) ? method : "other"
        // Fibonacci hashing of the thread's id: its high bits pick one of the 16 stripes.
        let stripe = stripes[Int((pthread_self() &* 0x9E37_79B9_7F4A_7C15) >> 60)]
        stripe.state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            state.latency[route, default: Histogram()].record(seconds)
        }
    }

    func exposition(
        pool: PostgresPool.Usage, poolSize: Int, standbys: StandbyReads.Usage? = nil, catalog: CatalogSize?
    ) -> String {
        var state = State()
        for stripe in stripes {
            let part = stripe.state.withLock { $0 }
            state.requests.merge(part.requests, uniquingKeysWith: +)
            for (route, histogram) in part.latency { state.latency[route, default: Histogram()].add(histogram) }
        }
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
            loyalty_db_pool_connections_in_use \(pool.inUse)
            # HELP loyalty_db_pool_connections Size of the database connection pool.
            # TYPE loyalty_db_pool_connections gauge
            loyalty_db_pool_connections \(poolSize)
            # HELP loyalty_db_pool_waits_total Callers that found every pooled connection in use and waited.
            # TYPE loyalty_db_pool_waits_total counter
            loyalty_db_pool_waits_total \(pool.waits)
            # HELP loyalty_db_pool_wait_seconds_total Time callers spent waiting for a pooled connection.
            # TYPE loyalty_db_pool_wait_seconds_total counter
            loyalty_db_pool_wait_seconds_total \(pool.waitSeconds)

            """
        if let standbys {
            text += """
                # HELP loyalty_db_standby_reads_total Reads a standby answered (DATABASE_REPLICA_URL).
                # TYPE loyalty_db_standby_reads_total counter
                loyalty_db_standby_reads_total \(standbys.standbyReads)
                # HELP loyalty_db_primary_reads_total Reads meant for a standby that the primary answered, by why.
                # TYPE loyalty_db_primary_reads_total counter

                """
            for reason in StandbyReads.Fallback.allCases {
                text += "loyalty_db_primary_reads_total{reason=\"\(reason.rawValue)\"} \(standbys.primaryReads[reason] ?? 0)\n"
            }
            text += """
                # HELP loyalty_db_standby_lag_seconds Each standby's replay lag when last checked (NaN: not known).
                # TYPE loyalty_db_standby_lag_seconds gauge

                """
            for (server, lag) in standbys.lagSeconds.sorted(by: { $0.key < $1.key }) {
                text += "loyalty_db_standby_lag_seconds{server=\"\(escaped(server))\"} \(lag.map { "\($0)" } ?? "NaN")\n"
            }
        }
        text += """
            # HELP loyalty_sightings_refused_total Resolved sightings of secure beacons refused, by reason.
            # TYPE loyalty_sightings_refused_total counter
            loyalty_sightings_refused_total{reason="impossible_journey"} \(impossibleJourneys.load(ordering: .relaxed))

            """
        if let catalog {
            text += """
                # HELP loyalty_catalog_offers Live offers (not removed), counted when scraped.
                # TYPE loyalty_catalog_offers gauge
                loyalty_catalog_offers \(catalog.liveOffers)
                # HELP loyalty_catalog_stores Live stores (not removed), counted when scraped.
                # TYPE loyalty_catalog_stores gauge
                loyalty_catalog_stores \(catalog.liveStores)
                # HELP loyalty_catalog_retailers Registered retailers, counted when scraped.
                # TYPE loyalty_catalog_retailers gauge
                loyalty_catalog_retailers \(catalog.retailers)
                # HELP loyalty_catalog_feed_version Version of the catalog change feed: grows with every catalog write.
                # TYPE loyalty_catalog_feed_version gauge
                loyalty_catalog_feed_version \(catalog.feedVersion)

                """
        }
        return text
    }

    private func escaped(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
