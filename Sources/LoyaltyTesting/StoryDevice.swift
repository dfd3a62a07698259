import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `loyalty` with a home of its own (LOYALTY_HOME) against a `StoryServer`.
public struct StoryDevice: Sendable {
    public let server: StoryServer
    public let home: URL

    public init(server: StoryServer, home: URL) {
        self.server = server
        self.home = home
    }

    public struct Shown: Sendable {
        public var title: String
        public var time: Double
    }

    public func run(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
        try Binary("loyalty").run(
            arguments,
            environment: ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url].merging(environment) {
                $1
            })
    }

    @discardableResult
    public func ok(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
        let result = try run(arguments, environment)
        guard result.status == 0 else {
            throw StoryFailure(
                "loyalty \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result
    }

    public func setOffer(_ major: Int, _ minor: Int, _ title: String, _ options: [String]) throws {
        try ok(["retailer", "offer", "set", "\(major)", "\(minor)", "--title", title] + options)
    }

    /// The retailer's figures, in beacon order.
    public func statistics() throws -> [(seenBy: Int, redemptions: Int)] {
        try ok(["retailer", "stats", "--json"]).jsonLines.map { line in
            (line["seen_by"] as? Int ?? -1, line["redemptions"] as? Int ?? -1)
        }
    }

    /// A second device of this account, linked with a code from this one, typed the way a person might:
    /// `K7M2-Q9XP-4HTD` as `k7m2 q9xp 4htd` (three arguments).
    public func linkedDevice() throws -> StoryDevice {
        guard let code = try ok(["account", "link", "--json"]).jsonLines.first?["code"] as? String else {
            throw StoryFailure("account link printed no code")
        }
        let other = server.device()
        let typed = code.lowercased().split(separator: "-").map(String.init)
        guard typed.count == 3 else { throw StoryFailure("a link code of three groups, not \(code)") }
        try other.ok(["account", "link"] + typed + ["--name", "second"])
        return other
    }

    /// Walks up to the beacons `UUID:1:MINOR`, one after the other, near each for 4 s, and syncs: the account has
    /// seen their offers, as a shopper in the shop has, and may redeem them.
    public func visit(_ uuid: String, minors: [Int]) throws {
        let end = 8 * minors.count + 8
        let walk = try server.walk(
            minors.enumerated().map { index, minor in
                let t = 8 * index + 2
                return "\(uuid):1:\(minor)@0=20,\(t)=20,\(t + 1)=1,\(t + 5)=1,\(t + 6)=20,\(end)=20"
            })
        try ok(["scan", "--replay", walk.path, "--json"])
        try ok(["sync"])
    }

    /// The offers a replay of `walk` showed, in order.
    public func scan(_ walk: URL, _ options: [String] = []) throws -> [Shown] {
        try ok(["scan", "--replay", walk.path, "--json"] + options).jsonLines.compactMap { line in
            guard line["event"] as? String == "offer", let offer = line["offer"] as? [String: Any],
                let title = offer["title"] as? String, let time = line["t"] as? Double
            else { return nil }
            return Shown(title: title, time: time)
        }
    }

    public func syncReport() throws -> [String: Any] {
        guard let synced = try ok(["sync", "--json"]).jsonLines.first(where: { $0["event"] as? String == "synced" }) else {
            throw StoryFailure("sync printed no synced line")
        }
        return synced
    }

    public func cachedTitles() throws -> [String] {
        try ok(["offers", "--json"]).jsonLines.compactMap { $0["title"] as? String }
    }

    /// Runs an offline scan paced in real time and SIGKILLs it as soon as it printed an offer line.
    public func killScanAfterFirstOffer(_ walk: URL) throws {
        let process = Process()
        process.executableURL = Binary("loyalty").url
        process.arguments = ["scan", "--replay", walk.path, "--json", "--realtime", "--offline"]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url]) { $1 }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var printed = ""
        while !printed.contains("\"event\":\"offer\"") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        guard printed.contains("\"event\":\"offer\""), process.terminationReason == .uncaughtSignal else {
            throw StoryFailure("the scan ended before it printed an offer: \(printed)")
        }
    }
}

public struct StoryFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
