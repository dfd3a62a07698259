import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `loyalty-server` with its data in a temporary directory, stopped (SIGTERM, then waited for) when
/// the test process exits.
public final class StoryServer: @unchecked Sendable {  // immutable after init
    /// The server the stories share. It holds every story's retailers, so its directory would reach two buckets
    /// (32 retailers) partway through a run, and a plain sync would carry every retailer before that and only the
    /// working set after: it has two from the start, so that each story sees the same whatever ran before it. A
    /// story that scans offline after its sync carries the whole catalog (`sync --all`).
    public static let shared: Result<StoryServer, any Error> = {
        Result {
            let server = try StoryServer()
            atexit { if case .success(let server) = StoryServer.shared { server.stop() } }
            try server.addRetailers(32)
            return server
        }
    }()

    public let url: String
    public let operatorToken = "story-" + UUID().uuidString
    public let work: URL
    private let process = Process()

    /// A server of a test's own, for a story that counts the retailers (`shared` holds every story's): the test
    /// stops it.
    public init() throws {
        work = try ThrowawayDirectory.make("loyalty-story", postgresMayEnter: true)
        process.executableURL = Binary("loyalty-server").url
        process.arguments = [
            "--listen", "127.0.0.1:0", "--data-dir", work.appendingPathComponent("server").path,
            // Every story's accounts and failed tokens come from 127.0.0.1; the limits have tests of their own.
            "--no-rate-limits",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "LOYALTY_ADMIN_TOKEN": operatorToken
        ]) {
            $1
        }
        let out = Pipe()
        process.standardOutput = out
        let log = work.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        var announced = ""
        while !announced.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw StoryFailure("loyalty-server exited: see \(log.path)") }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = announced.range(of: "http://[^\\s]+", options: .regularExpression) else {
            throw StoryFailure("loyalty-server said: \(announced)")
        }
        url = String(announced[range])
    }

    public func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: work)
    }

    /// A device (or the retailer's workstation) with a home of its own.
    public func device() -> StoryDevice {
        StoryDevice(server: self, home: work.appendingPathComponent("device-\(UUID().uuidString)"))
    }

    public func retailer(_ name: String, uuid: String) throws -> StoryDevice {
        let retailer = device()
        try retailer.ok(
            ["retailer", "register", "--name", name, "--uuid", uuid],
            ["LOYALTY_ADMIN_TOKEN": operatorToken])
        return retailer
    }

    /// `count` retailers without stores or offers: with 32 or more in all, the directory has two buckets, and a
    /// working set carries only the retailers near, heard or followed.
    public func addRetailers(_ count: Int) throws {
        for index in 0..<count { _ = try retailer("Filler \(index) \(UUID().uuidString.prefix(8))", uuid: UUID().uuidString) }
    }

    public func newAccount() throws -> StoryDevice {
        let shopper = device()
        try shopper.ok(["account", "create"])
        return shopper
    }

    /// A capture of a walk past beacons, `UUID:MAJOR:MINOR@t=metres,...` each.
    public func walk(_ beacons: [String]) throws -> URL {
        let file = work.appendingPathComponent("walk-\(UUID().uuidString).btsnoop")
        try device().ok(
            ["beacon", "simulate", "--write", file.path] + beacons.flatMap { ["--walk", $0] })
        return file
    }
}
