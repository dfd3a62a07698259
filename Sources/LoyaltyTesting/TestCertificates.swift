import Foundation

/// A throwaway private CA and a server certificate it signed for `localhost` and 127.0.0.1, made by the openssl
/// command (Debian package openssl) in `directory`: what HAProxy terminates TLS with in the tests of the shipped
/// deploy/haproxy.cfg, and what a client trusts with --ca-file.
public struct TestCertificates: Sendable {
    /// The CA's certificate (PEM): the client's --ca-file.
    public let caFile: URL
    /// The server's certificate followed by its key (PEM), as HAProxy's `crt` takes it.
    public let serverChainAndKey: URL

    public init(in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let openssl = Binary(at: "/usr/bin/openssl")
        guard FileManager.default.isExecutableFile(atPath: openssl.url.path) else {
            throw TestCertificateFailure("/usr/bin/openssl is missing: apt-get install openssl (make test-deps installs it)")
        }
        // P-256 keys: made at once, where RSA's take a noticeable while.
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Data("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n".utf8)
            .write(to: URL(fileURLWithPath: path("server.ext")))
        for step in [
            ["req", "-x509"] + key + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=loyalty test CA"],
            ["req"] + key + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=localhost"],
            [
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-days", "2", "-extfile", path("server.ext"), "-out", path("server.pem"),
            ],
        ] {
            let result = try openssl.run(step)
            guard result.status == 0 else {
                throw TestCertificateFailure("openssl \(step.joined(separator: " ")) exited \(result.status): \(result.stderr)")
            }
        }
        caFile = directory.appendingPathComponent("ca.pem")
        serverChainAndKey = directory.appendingPathComponent("haproxy.pem")
        let chain = try Data(contentsOf: URL(fileURLWithPath: path("server.pem")))
        let serverKey = try Data(contentsOf: URL(fileURLWithPath: path("server.key")))
        guard FileManager.default.createFile(atPath: serverChainAndKey.path, contents: chain + serverKey, attributes: [.posixPermissions: 0o600])
        else { throw TestCertificateFailure("cannot write \(serverChainAndKey.path)") }
    }
}

public struct TestCertificateFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
