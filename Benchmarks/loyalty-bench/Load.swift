// The server bench's load: wrk against the server and pgbench against its database in rounds, and the CPU each
// process spends per request.
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU seconds, or per request, by process: this one's (the server's threads; the bench only waits for the load
/// tool meanwhile), the PostgreSQL cluster's, and the load tool's (wrk or pgbench). Read from the kernel's
/// accounting, this is far steadier than rates while other work shares the machine.
struct CPUUsage {
    var server = 0.0
    var postgres = 0.0
    var tool = 0.0

    /// Microseconds per request of what was used between `start` and `end`.
    init(from start: CPUUsage, to end: CPUUsage, requests: Int) {
        let scale = 1e6 / Double(max(1, requests))
        server = (end.server - start.server) * scale
        postgres = (end.postgres - start.postgres) * scale
        tool = (end.tool - start.tool) * scale
    }

    /// What was used until now; `postmaster` is the cluster's.
    init(postmaster: Int32) {
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        var own = rusage()
        getrusage(RUSAGE_SELF.rawValue, &own)
        server = seconds(own.ru_utime) + seconds(own.ru_stime)
        // The load tool is a child this process waited for; the cluster is no child of it (pg_ctl detaches).
        var children = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &children)
        tool = seconds(children.ru_utime) + seconds(children.ru_stime)
        postgres = Self.clusterSeconds(postmaster: postmaster)
    }

    init(server: Double, postgres: Double, tool: Double) {
        (self.server, self.postgres, self.tool) = (server, postgres, tool)
    }

    /// The postmaster's time and that of the children it reaped, plus that of its live children (the backends,
    /// the pool's among them, and the background processes).
    private static func clusterSeconds(postmaster: Int32) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for process in processes where process.first?.isNumber == true {
            // Fields after the command's closing parenthesis: state, ppid, ..., utime (12th), stime, cutime, cstime.
            guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 14, let parent = Int32(fields[1]) else { continue }
            let times = fields[11...14].map { Double($0) ?? 0 }
            if Int32(process) == postmaster {
                total += times.reduce(0, +) / ticks
            } else if parent == postmaster {
                total += (times[0] + times[1]) / ticks
            }
        }
        return total
    }

    /// Each process's median.
    static func medians(_ usages: [CPUUsage]) -> CPUUsage {
        CPUUsage(
            server: median(usages.map(\.server)), postgres: median(usages.map(\.postgres)),
            tool: median(usages.map(\.tool)))
    }
}

/// wrk against the server and pgbench against its database, `connections` clients on `loadThreads` threads each.
struct Load {
    let server: BenchSite
    let tokens: [String]

    struct Result {
        var rate: Double
        var p99Milliseconds: Double
        var errors: Int
        /// Per request.
        var cpu: CPUUsage
        var clean: Bool { errors == 0 }
    }

    /// wrk's rate and pgbench's in a round, and over all rounds: the medians, and the median of the rounds' ratios;
    /// then wrk paced at `share` of pgbench's median rate, and pgbench paced at the same rate: the p99 the database
    /// itself reaches there.
    struct Comparison {
        var served: Result
        var reference: Reference
        var ratio: Double
        var share: Double
        var pacedTarget: Double
        var paced: Result
        var pacedReferenceP99Milliseconds: Double
        var floors: [Floor]
        /// The same requests to a second server on the same database without the catalog check, in the same rounds.
        var withoutCatalogCheck: Baseline?
    }

    /// A second server's median rate and CPU per request, and the median of the rounds' ratios of this one's rate to
    /// it.
    struct Baseline {
        var served: Result
        var ratio: Double
    }

    /// floor-server's median rate in a design over the same rounds, and the median of its rounds' ratios to pgbench.
    struct Floor {
        var design: FloorServer.Design
        var rate: Double
        var ratio: Double
    }

    struct Reference {
        var tps: Double
        var meanMilliseconds: Double
        /// Per transaction (`server` unused).
        var cpu: CPUUsage
    }

    /// wrk and pgbench take turns, `rounds` times each for `roundSeconds`: the load the machine's other work puts
    /// on it changes from minute to minute, and runs side by side see much the same. Each closure gets the round's
    /// number (from 0; the paced run's is `rounds`, `withoutCatalogCheck`'s rounds are `rounds + 1` on).
    static let rounds = 3
    static let roundSeconds = 4
    /// The paced run's connections: twice the clients, so that a slow answer leaves a connection free for the next
    /// request due (its first requests go out together, a burst under 1 % of the run's).
    static let pacedConnections = 2 * connections

    func compare(
        _ name: String, share: Double, wrk request: (Int) -> String, pgbench transaction: String,
        defining variables: (Int) -> [String: String] = { _ in [:] }, floors: [FloorServer] = [],
        withoutCatalogCheck: String? = nil
    ) throws -> Comparison {
        var served: [Result] = []
        var references: [Reference] = []
        var floorRates = floors.map { _ in [Double]() }
        var baseline: [Result] = []
        for round in 0..<Self.rounds {
            // The two servers' turns swap every other round: neither always runs behind the other's writes.
            let baselineFirst = round % 2 == 1
            if let url = withoutCatalogCheck, baselineFirst {
                baseline.append(try wrk(name + "-without-check", request(Self.rounds + 1 + round), url: url))
            }
            served.append(try wrk(name, request(round)))
            if let url = withoutCatalogCheck, !baselineFirst {
                baseline.append(try wrk(name + "-without-check", request(Self.rounds + 1 + round), url: url))
            }
            references.append(try pgbench(name, transaction, defining: variables(round)))
            for (index, floor) in floors.enumerated() {
                floorRates[index].append(
                    try wrk("\(name)-floor-\(floor.design.rawValue)", request(round), url: floor.url).rate)
            }
        }
        let reference = Reference(
            tps: median(references.map(\.tps)), meanMilliseconds: median(references.map(\.meanMilliseconds)),
            cpu: CPUUsage.medians(references.map(\.cpu)))
        let pacedTarget = share * reference.tps
        return Comparison(
            served: Self.medians(served),
            reference: reference, ratio: median(zip(served, references).map { $0.rate / $1.tps }), share: share,
            pacedTarget: pacedTarget, paced: try wrk(name + "-paced", request(Self.rounds), pacedAt: pacedTarget),
            pacedReferenceP99Milliseconds: try pgbenchP99(
                name + "-paced", transaction, defining: variables(Self.rounds), pacedAt: pacedTarget),
            floors: zip(floors, floorRates).map { floor, rates in
                Floor(
                    design: floor.design, rate: median(rates), ratio: median(zip(rates, references).map { $0 / $1.tps }))
            },
            withoutCatalogCheck: baseline.isEmpty
                ? nil
                : Baseline(
                    served: Self.medians(baseline), ratio: median(zip(served, baseline).map { $0.rate / $1.rate })))
    }

    /// Each figure's median over the rounds; the errors of them all.
    private static func medians(_ results: [Result]) -> Result {
        Result(
            rate: median(results.map(\.rate)), p99Milliseconds: median(results.map(\.p99Milliseconds)),
            errors: results.map(\.errors).reduce(0, +), cpu: CPUUsage.medians(results.map(\.cpu)))
    }

    /// wrk with `loadThreads` threads, each taking turns among its share of the clients request by request: each
    /// client is one device (its token, its number `connection`), as pgbench's client of that number. `pacedAt`:
    /// requests per second, each thread sending its share at even intervals on `pacedConnections` connections
    /// (wrk's `delay()`; late answers are caught up at once, as an open-loop load would), instead of a closed loop.
    /// `url`: another server's (floor-server's: the CPU figures are then only the load tool's and PostgreSQL's; or the
    /// second one in this process, `BenchSite.withoutCatalogCheck`).
    func wrk(
        _ name: String, _ requestScript: String, seconds: Int = Load.roundSeconds, pacedAt rate: Double? = nil,
        url: String? = nil
    ) throws -> Result {
        let script = server.work.appendingPathComponent("\(name).lua")
        let tokenList = tokens.map { "\"\($0)\"" }.joined(separator: ", ")
        let pacing =
            rate.map { rate in
                """
                local ffi = require("ffi")
                ffi.cdef[[
                    struct bench_timespec { long tv_sec; long tv_nsec; };
                    int clock_gettime(int clock, struct bench_timespec *time);
                ]]
                local now = ffi.new("struct bench_timespec")
                local interval = \(1e3 * Double(loadThreads) / rate)
                local slot
                function delay()
                    ffi.C.clock_gettime(1, now)
                    local milliseconds = tonumber(now.tv_sec) * 1e3 + tonumber(now.tv_nsec) / 1e6
                    slot = (slot or milliseconds) + interval
                    return math.max(0, slot - milliseconds)
                end
                """
            } ?? ""
        try """
        local tokens = {\(tokenList)}
        local perThread = \(tokens.count / loadThreads)
        local threads = 0
        function setup(thread)
            thread:set("first", threads * perThread)
            threads = threads + 1
        end
        function init(args)
            math.randomseed(first * 7919 + os.time())
        end
        local turn = 0
        \(requestScript)
        function request()
            turn = turn % perThread + 1
            connection = first + turn
            token = tokens[connection]
            return clientRequest()
        end
        \(pacing)
        function done(summary, latency, requests)
            local e = summary.errors
            io.write(string.format("WRK %d %d %d %d\\n", summary.requests, summary.duration,
                e.connect + e.read + e.write + e.status + e.timeout, latency:percentile(99)))
        end
        """.write(to: script, atomically: true, encoding: .utf8)
        let start = CPUUsage(postmaster: server.postmasterPID)
        let output = try runTool(
            "/usr/bin/wrk",
            [
                "-t\(loadThreads)", "-c\(rate == nil ? connections : Self.pacedConnections)", "-d\(seconds)s", "-s",
                script.path, url ?? server.url,
            ])
        let end = CPUUsage(postmaster: server.postmasterPID)
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("WRK ") }) else {
            throw BenchFailure("wrk said: \(output)")
        }
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        let result = Result(
            rate: fields[0] / (fields[1] / 1e6), p99Milliseconds: fields[3] / 1e3, errors: Int(fields[2]),
            cpu: CPUUsage(from: start, to: end, requests: Int(fields[0])))
        if !result.clean { print("  wrk \(name): \(result.errors) errors or non-2xx/3xx answers") }
        return result
    }

    /// Transactions per second (without connection time), their mean latency and CPU per transaction. `defining`:
    /// variables each client starts with.
    func pgbench(_ name: String, _ transaction: String, defining variables: [String: String]) throws -> Reference {
        let start = CPUUsage(postmaster: server.postmasterPID)
        let output = try runPgbench(name, transaction, defining: variables)
        let end = CPUUsage(postmaster: server.postmasterPID)
        func figure(after prefix: String) -> Double? {
            output.split(separator: "\n").first { $0.hasPrefix(prefix) }
                .flatMap { $0.dropFirst(prefix.count).split(separator: " ").first.flatMap { Double($0) } }
        }
        guard let tps = figure(after: "tps = "), let latency = figure(after: "latency average = "),
            let transactions = figure(after: "number of transactions actually processed: ")
        else {
            throw BenchFailure("pgbench said: \(output)")
        }
        return Reference(
            tps: tps, meanMilliseconds: latency, cpu: CPUUsage(from: start, to: end, requests: Int(transactions)))
    }

    /// pgbench paced at `rate` transactions per second (`-R`): the 99th percentile of their latencies, from its
    /// per-transaction log. As wrk's, a latency runs from the transaction's start, not from when it was due.
    func pgbenchP99(_ name: String, _ transaction: String, defining variables: [String: String], pacedAt rate: Double)
        throws -> Double
    {
        let prefix = "\(name)-transactions"
        let rateOption = String(format: "%.0f", rate)
        _ = try runPgbench(
            name, transaction, defining: variables,
            options: ["-R", rateOption, "-l", "--log-prefix=" + server.work.appendingPathComponent(prefix).path])
        // One log per thread: PREFIX.PID and PREFIX.PID.N; each line "client transaction latency_us script ...".
        var latencies: [Double] = []
        let files = try FileManager.default.contentsOfDirectory(atPath: server.work.path)
        for file in files where file.hasPrefix(prefix + ".") {
            let log = try String(contentsOf: server.work.appendingPathComponent(file), encoding: .utf8)
            latencies += log.split(separator: "\n").compactMap { line in
                line.split(separator: " ").dropFirst(2).first.flatMap { Double($0) }
            }
        }
        guard !latencies.isEmpty else { throw BenchFailure("pgbench -R \(rate) logged no transaction") }
        latencies.sort()
        return latencies[min(latencies.count - 1, Int(0.99 * Double(latencies.count)))] / 1e3
    }

    /// pgbench's `transaction` script for one round, on `connections` clients and `loadThreads` threads: its output.
    private func runPgbench(
        _ name: String, _ transaction: String, defining variables: [String: String], options: [String] = []
    ) throws -> String {
        // Each client starts with its parameters not yet looked up (`clientParameters`).
        let variables = variables.merging(["looked_up": "0"]) { given, _ in given }
        let script = server.work.appendingPathComponent("\(name).pgbench")
        try transaction.write(to: script, atomically: true, encoding: .utf8)
        return try runTool(
            "/usr/lib/postgresql/15/bin/pgbench",
            [
                "-n", "-M", "extended", "-c", "\(connections)", "-j", "\(loadThreads)", "-T", "\(Self.roundSeconds)",
                "-f", script.path,
            ] + options + variables.sorted { $0.key < $1.key }.flatMap { ["-D", "\($0.key)=\($0.value)"] }
                + [server.conninfo])
    }
}


/// Runs a tool to completion; its standard output and error, together.
func runTool(_ path: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchFailure("\(path) exited with \(process.terminationStatus): \(output)")
    }
    return output
}
