import Foundation
import LoyaltyTesting

#if canImport(Glibc)
    import Glibc
#endif

/// HAProxy 2.6 (Debian's) running the shipped deploy/haproxy.cfg: its API frontend, TLS with a throwaway CA's
/// certificate for localhost and 127.0.0.1, in front of `servers`; its PostgreSQL frontends on ports nothing answers
/// behind (their members stay down; the API does not need them).
final class HAProxy {
    static let configuration = Repository.root.appendingPathComponent("deploy/haproxy.cfg")
    let port: UInt16
    /// The CA the API's certificate chains to: a client's --ca-file.
    let caFile: URL
    private let directory: URL
    private var pid: pid_t = 0

    init(servers: [UInt16]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-haproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificates = try TestCertificates(in: directory.appendingPathComponent("tls"))
        caFile = certificates.caFile
        port = try LoopbackSocket.freePort()
        var environment = ProcessInfo.processInfo.environment.merging([
            "LOYALTY_API_BIND": "127.0.0.1:\(port)", "LOYALTY_TLS_CERT": certificates.serverChainAndKey.path,
            "LOYALTY_SERVER_1": "127.0.0.1:\(servers[0])", "LOYALTY_SERVER_2": "127.0.0.1:\(servers[1])",
            "HAPROXY_MAXCONN": "256",
            "POSTGRES_PRIMARY_BIND": "127.0.0.1:\(try LoopbackSocket.freePort())",
            "POSTGRES_REPLICAS_BIND": "127.0.0.1:\(try LoopbackSocket.freePort())",
        ]) { $1 }
        for member in 1...3 {
            environment["PATRONI_\(member)_POSTGRES"] = "127.0.0.1:\(try LoopbackSocket.freePort())"
            environment["PATRONI_\(member)_REST_PORT"] = "\(try LoopbackSocket.freePort())"
        }
        pid = try LoyaltyServerProcess.spawn(
            ["/usr/sbin/haproxy", "-db", "-f", Self.configuration.path], environment: environment,
            output: directory.appendingPathComponent("haproxy.log").path)
    }

    var log: String { (try? String(contentsOf: directory.appendingPathComponent("haproxy.log"), encoding: .utf8)) ?? "" }

    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        pid = 0
        try? FileManager.default.removeItem(at: directory)
    }
}
