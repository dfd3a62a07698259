import Foundation
import HTTPClient
import LoyaltyTesting
import Postgres
import Synchronization

/// A Jepsen-style workload against loyalty-server instances on a `PatroniCluster`: shoppers redeeming (each with an
/// Idempotency-Key, retried under the same key until answered), tills accepting the codes (each code tried by two
/// tills), shoppers pushing seen offers, and catalog reads, while a fault hits the primary. Every operation is
/// recorded with its times and answer; `verify` checks the history against the database afterwards.
final class ClusterWorkload: @unchecked Sendable {  // its state is behind the Mutexes
    struct Operation: Sendable {
        enum Kind: String, Sendable { case redeem, accept, seen, catalog }
        var kind: Kind
        /// When the first attempt was sent, and when the answer that settled it came.
        var started: Date
        var finished: Date
        /// The settling answer's status, 0 when none came before the workload stopped.
        var status: Int
        /// Statuses of the attempts before it (0: no answer).
        var failedAttempts: [Int]
        var shopper: Int
        var offer: String
        /// The redemption's id and code (redeem), the code (accept).
        var redemptionID: String
        var code: String
        /// Which till tried (accept).
        var till = -1
    }

    let instances: [String]
    let shoppers: [(token: String, accountID: String)]
    /// Offers with a total and a per-shopper limit, and one without.
    let offers: [String]
    let openOffer: String
    let seenOffers: [String]
    let tillKeys: [(key: String, id: String)]
    let totalLimit: Int
    let perShopperLimit: Int
    /// The operator's token: the instances' /metrics are the operator's.
    private let adminToken: String
    private let history = Mutex<[Operation]>([])
    private let codes = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)

    init(
        instances: [String], adminToken: String, offers offerCount: Int = 3,
        seenOffers seenCount: Int = 20,
        shoppers shopperCount: Int = 16, totalLimit: Int = 40, perShopperLimit: Int = 3
    ) throws {
        self.instances = instances
        self.adminToken = adminToken
        self.totalLimit = totalLimit
        self.perShopperLimit = perShopperLimit
        let uuid = UUID().uuidString
        let retailer = try call(
            instances[0], "POST", "/v1/retailers", token: adminToken,
            json: ["name": "Cluster \(uuid.prefix(8))"])
        guard let apiKey = retailer.object["api_key"] as? String else {
            throw WorkloadFailure(retailer.text)
        }
        offers = try (1...offerCount).map { minor in
            let offer = try call(
                instances[minor % 2], "PUT", "/v1/retailer/offers/1/\(minor)", token: apiKey,
                json: [
                    "title": "Limited \(minor)", "total_limit": totalLimit,
                    "per_shopper_limit": perShopperLimit,
                ])
            guard let id = offer.object["id"] as? String else { throw WorkloadFailure(offer.text) }
            return id
        }
        // One offer without a total limit (and a per-shopper limit no run reaches) keeps redemptions coming after
        // the limited ones run out.
        let open = try call(
            instances[1], "PUT", "/v1/retailer/offers/1/\(offerCount + 1)", token: apiKey,
            json: ["title": "Open", "per_shopper_limit": 1_000_000])
        guard let openID = open.object["id"] as? String else { throw WorkloadFailure(open.text) }
        openOffer = openID
        seenOffers = try (1...seenCount).map { minor in
            let offer = try call(
                instances[minor % 2], "PUT", "/v1/retailer/offers/2/\(minor)", token: apiKey,
                json: ["title": "Seen \(minor)"])
            guard let id = offer.object["id"] as? String else { throw WorkloadFailure(offer.text) }
            return id
        }
        tillKeys = try (1...2).map { till in
            let key = try call(
                instances[till % 2], "POST", "/v1/retailer/till-keys", token: apiKey,
                json: ["name": "Till \(till)"])
            guard let tillKey = key.object["till_key"] as? String, let id = key.object["id"] as? String
            else {
                throw WorkloadFailure(key.text)
            }
            return (tillKey, id)
        }
        let now = ISO8601DateFormatter().string(from: Date())
        let limited = offers + [openID]
        shoppers = try (0..<shopperCount).map { index in
            let account = try call(instances[index % 2], "POST", "/v1/accounts", json: [:])
            guard let token = account.object["device_token"] as? String,
                let accountID = account.object["account_id"] as? String
            else { throw WorkloadFailure(account.text) }
            // The server redeems only offers the account has seen.
            let seen = try call(
                instances[index % 2], "POST", "/v1/seen", token: token,
                json: ["items": limited.map { ["offer_id": $0, "seen_at": now] }])
            guard seen.status == 200 else { throw WorkloadFailure(seen.text) }
            return (token, accountID)
        }
    }

    /// Runs the clients until `stop()`, then lets each settle its operation in flight (retrying for up to
    /// `settle` seconds); returns when all have.
    func run(until body: () throws -> Void, settle: Double = 30) rethrows {
        let group = DispatchGroup()
        var clients: [@Sendable () -> Void] = []
        for index in 0..<4 { clients.append { self.redeem(client: index) } }
        for index in 0..<2 {
            clients.append { self.accept(till: index) }
            clients.append { self.pushSeen(client: index) }
            clients.append { self.readCatalog(client: index) }
        }
        for client in clients {
            group.enter()
            Thread {
                client()
                group.leave()
            }.start()
        }
        defer {
            stopping.store(true, ordering: .relaxed)
            settleDeadline.withLock { $0 = Date().addingTimeInterval(settle) }
            group.wait()
        }
        try body()
    }

    var operations: [Operation] { history.withLock { $0 } }

    private let settleDeadline = Mutex<Date>(.distantFuture)
    /// Seconds a request may take: one to a server stuck on a frozen primary counts as unanswered and is retried.
    static let timeout = 10.0

    // MARK: - Clients

    private func redeem(client: Int) {
        var generator = SystemRandomNumberGenerator()
        while !stopping.load(ordering: .relaxed) {
            let shopper = Int.random(in: 0..<shoppers.count, using: &generator)
            let offer =
                Bool.random(using: &generator) ? openOffer : offers.randomElement(using: &generator)!
            let key = "redeem-\(UUID().uuidString)"
            var (operation, reply) = perform(.redeem, shopper: shopper, offer: offer, instance: client) {
                instance in
                try call(
                    instance, "POST", "/v1/redemptions", token: self.shoppers[shopper].token,
                    json: ["offer_id": offer],
                    headers: ["Idempotency-Key": key], totalTimeout: Self.timeout)
            }
            if operation.status == 201, let reply {
                operation.redemptionID = reply.object["redemption_id"] as? String ?? ""
                operation.code = reply.object["code"] as? String ?? ""
                // Two tills try each code.
                codes.withLock { $0 += [operation.code, operation.code] }
            }
            record(operation)
        }
    }

    private func accept(till: Int) {
        while !stopping.load(ordering: .relaxed) {
            guard let code = codes.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                Thread.sleep(forTimeInterval: 0.02)
                continue
            }
            let key = "accept-\(UUID().uuidString)"
            var (operation, _) = perform(.accept, shopper: -1, offer: "", instance: till) { instance in
                try call(
                    instance, "POST", "/v1/till/accept", token: self.tillKeys[till].key, json: ["code": code],
                    headers: ["Idempotency-Key": key], totalTimeout: Self.timeout)
            }
            operation.code = code
            operation.till = till
            record(operation)
        }
    }

    private func pushSeen(client: Int) {
        var generator = SystemRandomNumberGenerator()
        while !stopping.load(ordering: .relaxed) {
            let shopper = Int.random(in: 0..<shoppers.count, using: &generator)
            let offer = seenOffers.randomElement(using: &generator)!
            let item: [String: Any] = [
                "offer_id": offer, "seen_at": ISO8601DateFormatter().string(from: Date()),
            ]
            record(
                perform(.seen, shopper: shopper, offer: offer, instance: client) { instance in
                    try call(
                        instance, "POST", "/v1/seen", token: self.shoppers[shopper].token,
                        json: ["items": [item]],
                        totalTimeout: Self.timeout)
                }.operation)
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// One attempt each, not retried: a catalog read must be answered the first time.
    private func readCatalog(client: Int) {
        var generator = SystemRandomNumberGenerator()
        var etag: String?
        while !stopping.load(ordering: .relaxed) {
            let shopper = Int.random(in: 0..<shoppers.count, using: &generator)
            let started = Date()
            let reply = try? call(
                instances[Int.random(in: 0..<instances.count, using: &generator)], "GET", "/v1/catalog",
                token: shoppers[shopper].token, headers: etag.map { ["If-None-Match": $0] } ?? [:],
                totalTimeout: Self.timeout)
            if reply?.status == 200 { etag = reply?.headers["etag"] }
            record(
                Operation(
                    kind: .catalog, started: started, finished: Date(), status: reply?.status ?? 0,
                    failedAttempts: [],
                    shopper: shopper, offer: "", redemptionID: "", code: ""))
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Sends `request` until an answer other than 503 or no answer comes (alternating instances, waiting as
    /// Retry-After says, at most 1 s), or the settling time is over.
    private func perform(
        _ kind: Operation.Kind, shopper: Int, offer: String, instance first: Int,
        _ request: (String) throws -> Reply
    ) -> (operation: Operation, reply: Reply?) {
        let started = Date()
        var failed: [Int] = []
        var instance = first
        while true {
            let reply = try? request(instances[instance % instances.count])
            let status = reply?.status ?? 0
            if status != 0 && status != 503 {
                let operation = Operation(
                    kind: kind, started: started, finished: Date(), status: status, failedAttempts: failed,
                    shopper: shopper, offer: offer, redemptionID: "", code: "")
                return (operation, reply)
            }
            failed.append(status)
            if Date() > settleDeadline.withLock({ $0 }) {
                let operation = Operation(
                    kind: kind, started: started, finished: Date(), status: 0, failedAttempts: failed,
                    shopper: shopper,
                    offer: offer, redemptionID: "", code: "")
                return (operation, nil)
            }
            instance += 1
            let wait = reply?.headers["retry-after"].flatMap(Double.init) ?? 0.2
            Thread.sleep(forTimeInterval: min(wait, 1))
        }
    }

    private func record(_ operation: Operation) { history.withLock { $0.append(operation) } }

    // MARK: - The verdict

    struct Verdict: CustomStringConvertible {
        var acknowledged: [Operation.Kind: Int] = [:]
        var lost: [String] = []
        var acceptedTwice: [String] = []
        var overLimit: [String] = []
        var serverErrors: [Int] = []
        var unsettled = 0
        var catalogReads = 0
        var catalogReadsFailed = 0
        /// The failed reads' statuses (0: no answer within the timeout), each with how many.
        var catalogReadFailures: [Int: Int] = [:]
        /// When the failed reads were sent, in seconds from the fault (first and last).
        var catalogReadFailuresSent: ClosedRange<Double>?
        var retriedAcceptsRefused = 0
        /// Seconds from the fault until writes were acknowledged again (the end of the longest pause).
        var writesBackAfter: Double?

        var description: String {
            "acknowledged \(acknowledged.map { "\($0.key.rawValue) \($0.value)" }.sorted().joined(separator: ", ")); "
                + "lost \(lost.count) \(lost.prefix(5)); accepted twice \(acceptedTwice.count) \(acceptedTwice.prefix(5)); "
                + "over a limit \(overLimit); 5xx other than 503: \(serverErrors.count) \(Set(serverErrors)); "
                + "unsettled \(unsettled); catalog reads \(catalogReads), failed \(catalogReadsFailed) \(catalogReadFailures.sorted { $0.key < $1.key }) "
                + "sent \(catalogReadFailuresSent.map { String(format: "%+.1f..%+.1f s", $0.lowerBound, $0.upperBound) } ?? "-"); "
                + "till retries refused as accepted before \(retriedAcceptsRefused); "
                + "writes back after \(writesBackAfter.map { String(format: "%.1f s", $0) } ?? "never")"
        }
    }

    /// Checks the history against the database (a connection to the primary) and measures the outage from `fault`.
    func verify(_ database: PostgresConnection, fault: Date) throws -> Verdict {
        let operations = self.operations
        var verdict = Verdict()
        for operation in operations {
            if operation.kind != .catalog, [201, 200].contains(operation.status) {
                verdict.acknowledged[operation.kind, default: 0] += 1
            }
            if ([operation.status] + operation.failedAttempts).contains(where: { $0 >= 500 && $0 != 503 }) {
                verdict.serverErrors.append(operation.status)
            }
            if operation.kind != .catalog, operation.status == 0 { verdict.unsettled += 1 }
        }
        // None lost: every acknowledged write is in the database.
        for operation in operations where operation.kind == .redeem && operation.status == 201 {
            let rows = try database.query(
                "SELECT 1 AS found FROM redemptions WHERE id = \(operation.redemptionID)::uuid AND code = \(operation.code)"
            )
            if rows.isEmpty { verdict.lost.append("redemption \(operation.redemptionID)") }
        }
        for operation in operations where operation.kind == .accept && operation.status == 200 {
            let rows = try database.query(
                "SELECT 1 AS found FROM redemptions WHERE code = \(operation.code) AND accepted_at IS NOT NULL"
            )
            if rows.isEmpty { verdict.lost.append("acceptance of \(operation.code)") }
        }
        for operation in operations where operation.kind == .seen && operation.status == 200 {
            let rows = try database.query(
                """
                SELECT 1 AS found FROM seen
                WHERE account_id = \(shoppers[operation.shopper].accountID)::uuid AND offer_id = \(operation.offer)::uuid
                """)
            if rows.isEmpty {
                verdict.lost.append("seen \(operation.offer) of shopper \(operation.shopper)")
            }
        }
        // No code accepted twice: two tills try each code, one may succeed.
        let accepted = Dictionary(
            grouping: operations.filter { $0.kind == .accept && $0.status == 200 }, by: \.code)
        verdict.acceptedTwice = accepted.filter { $0.value.count > 1 }.map(\.key)
        // A retry of an acceptance whose answer was lost, refused as accepted before although this very till
        // accepted it: the till cannot tell.
        for operation in operations where operation.kind == .accept && operation.status == 409 {
            let rows = try database.query(
                "SELECT accepted_by::text AS till FROM redemptions WHERE code = \(operation.code)")
            if try rows.first?.decode("till", as: String?.self) == tillKeys[operation.till].id {
                verdict.retriedAcceptsRefused += 1
            }
        }
        // No limit exceeded, in the database.
        for offer in offers {
            let total = try database.query(
                "SELECT count(*) AS n FROM redemptions WHERE offer_id = \(offer)::uuid")[0]
                .decode("n", as: Int.self)
            if total > totalLimit {
                verdict.overLimit.append("offer \(offer): \(total) of \(totalLimit)")
            }
            let most = try database.query(
                """
                SELECT coalesce(max(n), 0) AS n FROM (
                    SELECT count(*) AS n FROM redemptions WHERE offer_id = \(offer)::uuid GROUP BY account_id) AS each
                """)[0].decode("n", as: Int.self)
            if most > perShopperLimit {
                verdict.overLimit.append("offer \(offer): a shopper has \(most)")
            }
        }
        let reads = operations.filter { $0.kind == .catalog }
        verdict.catalogReads = reads.count
        let failedReads = reads.filter { ![200, 304].contains($0.status) }
        verdict.catalogReadsFailed = failedReads.count
        verdict.catalogReadFailures = Dictionary(grouping: failedReads, by: \.status).mapValues(\.count)
        let sent = failedReads.map { $0.started.timeIntervalSince(fault) }
        if let first = sent.min(), let last = sent.max() { verdict.catalogReadFailuresSent = first...last }
        // The outage is the longest pause between write acknowledgements that ends after the fault: writes in
        // flight as the signal lands may still be acknowledged just after it.
        let acknowledgements = operations.filter {
            [.redeem, .accept, .seen].contains($0.kind) && [200, 201].contains($0.status)
        }.map(\.finished).sorted()
        verdict.writesBackAfter = zip(acknowledgements, acknowledgements.dropFirst())
            .filter { $0.1 > fault }
            .max { $0.1.timeIntervalSince($0.0) < $1.1.timeIntervalSince($1.0) }
            .map { $0.1.timeIntervalSince(fault) }
        return verdict
    }

    /// Answers per second from `instances` (each connection keeps to one, round robin) under a closed loop of
    /// `connections` clients for `seconds`: three catalog checks with the current ETag (304) to one seen push.
    /// Returns the rate and the requests not answered 2xx/304.
    func closedLoopRate(instances: [String], connections: Int = 16, seconds: Double = 10) -> (
        rate: Double, failed: Int
    ) {
        let answered = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        for connection in 0..<connections {
            group.enter()
            Thread {
                defer { group.leave() }
                let instance = instances[connection % instances.count]
                let shopper = self.shoppers[connection % self.shoppers.count].token
                let etag =
                    (try? call(instance, "GET", "/v1/catalog", token: shopper))?.headers["etag"] ?? ""
                var request = 0
                while Date() < deadline {
                    request += 1
                    let reply =
                        request % 4 == 0
                        ? try? call(
                            instance, "POST", "/v1/seen", token: shopper,
                            json: [
                                "items": [
                                    [
                                        "offer_id": self.seenOffers[request % self.seenOffers.count],
                                        "seen_at": ISO8601DateFormatter().string(from: Date()),
                                    ]
                                ]
                            ])
                        : try? call(
                            instance, "GET", "/v1/catalog", token: shopper, headers: ["If-None-Match": etag])
                    if let status = reply?.status, status < 300 || status == 304 {
                        answered.add(1, ordering: .relaxed)
                    } else {
                        failed.add(1, ordering: .relaxed)
                    }
                }
            }.start()
        }
        group.wait()
        return (Double(answered.load(ordering: .relaxed)) / seconds, failed.load(ordering: .relaxed))
    }

    /// Reads the standbys answered and reads meant for them that the primary answered, summed over the
    /// instances' /metrics.
    func standbyReadShare() throws -> (standby: Int, primary: Int) {
        var standby = 0
        var primary = 0
        for instance in instances {
            for line in try call(instance, "GET", "/metrics", token: adminToken).text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 2, let value = Double(fields[1]) else { continue }
                if fields[0] == "loyalty_db_standby_reads_total" { standby += Int(value) }
                if fields[0].hasPrefix("loyalty_db_primary_reads_total{") { primary += Int(value) }
            }
        }
        return (standby, primary)
    }
}

struct WorkloadFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
