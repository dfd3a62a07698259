import Arguments
import Foundation
import HTTPServer
import LoyaltyAPI
import Postgres
import Testing

@testable import LoyaltyServer
@testable import loyalty_server

@Suite struct UnitTests {
    @Test func secretsAreRandomAndComparedByContent() {
        let first = Secrets.token(prefix: "lk_")
        let second = Secrets.token(prefix: "lk_")
        #expect(first != second && first.count == 3 + 43)
        #expect(Secrets.constantTimeEqual(Secrets.digest(of: first), Secrets.digest(of: first)))
        #expect(!Secrets.constantTimeEqual(Secrets.digest(of: first), Secrets.digest(of: second)))
        #expect(!Secrets.constantTimeEqual([1, 2], [1, 2, 3]))
        let code = Secrets.humanCode(length: 8)
        #expect(code.count == 8 && !code.contains("0") && !code.contains("O") && !code.contains("I"))
    }

    /// PostgreSQL's array literal: each text quoted, its quotes and backslashes escaped, nil as an unquoted NULL;
    /// the rest, multi-byte UTF-8 included, byte for byte.
    @Test func textArrayQuotesAndEscapesEachValue() {
        #expect(textArray([]) == "{}")
        #expect(textArray([nil]) == "{NULL}")
        #expect(
            textArray(["plain", "a \"quote\"", #"back\slash"#, nil, "NULL", "", #"\""#, "café 🎉,{}"])
                == #"{"plain","a \"quote\"","back\\slash",NULL,"NULL","","\\\"","café 🎉,{}"}"#)
    }

    /// Foundation's base64, made URL-safe and unpadded, is the reference for the hand-written coder.
    @Test func base64URLMatchesFoundationAndRejectsOtherText() {
        for count in 0...66 {
            let bytes = Secrets.randomBytes(count)
            #expect(bytes.count == count)
            let reference = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Secrets.base64URL(bytes) == reference)
            #expect(Secrets.decodeBase64URL(reference) == bytes)
        }
        #expect(Secrets.base64URL([0xFB, 0xFF]) == "-_8")
        for text in ["A", "AB", "AAB", "+w", "/w", "AA==", "AA A", "é", "AAAAA"] {
            #expect(Secrets.decodeBase64URL(text) == nil, "\(text)")
        }
    }

    @Test func theBearerTokenIsReadFromAnySpellingOfTheScheme() {
        func token(_ authorization: String) -> String? {
            HTTPRequest(method: "GET", path: "/", headers: ["authorization": authorization]).bearerToken
        }
        #expect(token("Bearer ld_abc") == "ld_abc")
        #expect(token("bEaReR ld_abc") == "ld_abc")
        #expect(token("Bearer  \tld_abc \t") == "ld_abc")
        #expect(token("Bearer ld_é") == "ld_é")
        #expect(token("Basic ld_abc") == nil)
        #expect(token("Bearers ld_abc") == nil)
        #expect(token("Bearer") == nil)
        #expect(token("Bearer  ") == nil)
        #expect(HTTPRequest(method: "GET", path: "/").bearerToken == nil)
    }

    @Test func aDeviceTokenNamesItsAccount() {
        let account = UUID()
        let token = DeviceToken.issue(accountID: account)
        #expect(DeviceToken.accountID(in: token) == account)
        // The account's symbols must be base64url; the rest is the digest lookup's to judge.
        var notBase64URL = Array(token.utf8)
        notBase64URL[5] = UInt8(ascii: "+")
        #expect(DeviceToken.accountID(in: String(decoding: notBase64URL, as: UTF8.self)) == nil)
        #expect(DeviceToken.accountID(in: String(token.dropLast()) + "*") == account)
        // A token from before (32 random bytes, no account) and other credentials name none.
        #expect(DeviceToken.accountID(in: deviceTokenPrefix + Secrets.base64URL(Secrets.randomBytes(32))) == nil)
        #expect(DeviceToken.accountID(in: "lk_" + token.dropFirst(3)) == nil)
    }

    @Test func cursorsRoundTripAndRejectForgeries() {
        let cursor = FeedCursor(generation: UUID(), version: 42)
        #expect(FeedCursor(cursor.encoded()) == cursor)
        #expect(FeedCursor("") == nil)
        #expect(FeedCursor("djE6bm90LWEtdXVpZDox") == nil)  // "v1:not-a-uuid:1"
        #expect(FeedCursor(Secrets.base64URL(Array("v1:\(UUID()):-1".utf8))) == nil)
    }

    /// The cursor is read as bytes now; it accepts what the split into Characters accepted, the same way.
    @Test func cursorsReadAsBytesAcceptWhatTheCharactersAccepted() {
        func before(_ text: String) -> FeedCursor? {
            guard text.count <= 200, let bytes = Secrets.decodeBase64URL(text),
                let plain = String(bytes: bytes, encoding: .utf8)
            else { return nil }
            let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3 || (parts.count == 5 && parts[0] == "n1"), ["v1", "n1", "p1"].contains(parts[0]),
                let generation = try? UUID(postgresText: String(parts[1])),
                let version = Int64(parts[2]), version >= 0
            else { return nil }
            var position: NearPosition?
            if parts.count == 5 {
                guard let after = try? UUID(postgresText: String(parts[4])) else { return nil }
                switch parts[3] {
                case "s": position = .stores(after: after)
                case "o": position = .offers(after: after)
                default: return nil
                }
            }
            var cursor = FeedCursor(
                generation: generation, version: version, near: parts[0] == "n1", nearPosition: position)
            cursor.part = parts[0] == "p1"
            return cursor
        }
        let id = UUID().uuidString.lowercased()
        let other = UUID().uuidString
        var plains = [
            "v1:\(id):42", "n1:\(id):7", "p1:\(id):0", "n1:\(id):7:s:\(other)", "n1:\(id):7:o:\(id)",
            "v1:\(id):+5", "v1:\(id):-0", "v1:\(id):-1", "v1:\(id):0042", "v1:\(id):", "v1:\(id):+", "v1:\(id):-",
            "v1:\(id):9223372036854775807", "v1:\(id):9223372036854775808", "v1:\(id):-9223372036854775808",
            "\u{FEFF}v1:\(id):1", "\u{FEFF}\u{FEFF}v1:\(id):1", "v1:\(other):1", "v1:\(id):1:s:\(id)",
            "p1:\(id):1:o:\(id)", "n1:\(id):7:x:\(id)", "n1:\(id):7:ss:\(id)", "n1:\(id):7::\(id)", "n1:\(id):7:s:",
            "v1:\(id):1:", ":v1:\(id):1", "v1::\(id):1", "V1:\(id):1", "v2:\(id):1", "v1:\(id):\u{301}1",
            "v1:\(id):1\u{301}", "v1\u{301}:\(id):1", "\u{600}:v1:\(id):1", "v1:\u{600}:\(id):1", "v1:\(id): 1",
            "v1:\(id):1 ", "v1:\(id):١", "v1:{\(id)}:1", "", ":", "::", "v1", "n1:\(id):7:s",
        ]
        plains.append("v1:\(id):" + String(repeating: "1", count: 200))
        var texts = plains.map { Secrets.base64URL(Array($0.utf8)) }
        texts += ["djE6", "not base64!", "Zm9v=", String(repeating: "A", count: 201), "é" + texts[0]]
        texts.append(Secrets.base64URL([0xFF, 0xFE] + Array("v1:\(id):1".utf8)))
        texts.append(Secrets.base64URL(Array("v1:\(id):1".utf8) + [0xC3]))
        for text in texts {
            #expect(FeedCursor(text) == before(text), "\(text)")
        }
        #expect(texts.filter { FeedCursor($0) != nil }.count >= 10)
    }

    @Test func optionsParse() throws {
        let environment = ["HOME": "/home/shopper", "DATABASE_URL": "postgres://db/loyalty"]
        let defaults = try #require(try ServerOptions.parse([], environment: environment))
        #expect(defaults.host == "127.0.0.1" && defaults.port == 8080)
        #expect(defaults.dataDirectory.path == "/home/shopper/.local/share/loyalty-server")
        #expect(defaults.databaseURL == "postgres://db/loyalty" && defaults.operatorToken == nil)

        let custom = try #require(
            try ServerOptions.parse(["--listen", "[::1]:0", "--data-dir", "/srv/loyalty"], environment: environment))
        #expect(custom.host == "[::1]" && custom.port == 0 && custom.dataDirectory.path == "/srv/loyalty")
        #expect(try ServerOptions.parse(["--help"], environment: environment) == nil)
        #expect(throws: UsageError.self) {
            try ServerOptions.parse(["--listen", "8080"], environment: [:])
        }
        #expect(throws: UsageError.self) { try ServerOptions.parse(["--bogus"], environment: [:]) }
        #expect(throws: UsageError.self) { try ServerOptions.parse(["extra-word"], environment: [:]) }
        #expect(throws: UsageError.self) { try ServerOptions.parse(["migrate", "--listen", ":1"], environment: [:]) }
        guard case .print(let version) = try ServerCommand.command(environment: environment).parse(["--version"]) else {
            Issue.record("--version does not print the version")
            return
        }
        #expect(version == "loyalty-server \(Release.version)")
        #expect(try ServerOptions.parse(["--version"], environment: environment) == nil)

        // --data-dir is global: before or after `migrate`.
        for arguments in [["migrate", "--data-dir", "/srv/x"], ["--data-dir", "/srv/x", "migrate"]] {
            let migrate = try #require(try ServerOptions.parse(arguments, environment: environment))
            #expect(migrate.migrateOnly && migrate.dataDirectory.path == "/srv/x", "\(arguments)")
        }
        #expect(defaults.migrateOnly == false)
    }

    @Test func listenAddressComesFromTheEnvironmentUnlessGiven() throws {
        let environment = ["HOME": "/home/shopper", "LOYALTY_LISTEN": "0.0.0.0:9000"]
        let fromEnvironment = try #require(try ServerOptions.parse([], environment: environment))
        #expect(fromEnvironment.host == "0.0.0.0" && fromEnvironment.port == 9000)
        let fromArgument = try #require(
            try ServerOptions.parse(["--listen", "127.0.0.1:8081"], environment: environment))
        #expect(fromArgument.host == "127.0.0.1" && fromArgument.port == 8081)
        #expect(throws: UsageError.self) {
            try ServerOptions.parse([], environment: ["HOME": "/", "LOYALTY_LISTEN": "9000"])
        }
    }

    /// The retention period: 180 days unless LOYALTY_RETENTION_DAYS or --retention-days (which wins) says
    /// otherwise; anything but 1 to 3650 whole days is a usage error naming the setting.
    @Test func theRetentionComesFromTheArgumentsOrTheEnvironment() throws {
        #expect(try ServerOptions.parse([], environment: ["HOME": "/"])?.retentionDays == 180)
        let environment = ["HOME": "/", "LOYALTY_RETENTION_DAYS": "30"]
        #expect(try ServerOptions.parse([], environment: environment)?.retentionDays == 30)
        #expect(try ServerOptions.parse(["--retention-days", "7"], environment: environment)?.retentionDays == 7)
        for bad in ["0", "3651", "-1", "1.5", "x", "ninety"] {
            #expect(throws: UsageError.self, "\(bad)") {
                try ServerOptions.parse(["--retention-days", bad], environment: ["HOME": "/"])
            }
            do {
                _ = try ServerOptions.parse([], environment: ["HOME": "/", "LOYALTY_RETENTION_DAYS": bad])
                Issue.record("LOYALTY_RETENTION_DAYS=\(bad) was taken")
            } catch {
                #expect("\(error)".contains("LOYALTY_RETENTION_DAYS") && "\(error)".contains("1 to 3650"), "\(error)")
            }
        }
    }

    @Test func theBeaconKeyFileComesFromTheArgumentsOrTheEnvironment() throws {
        let environment = ["HOME": "/", "LOYALTY_BEACON_KEY_FILE": "/etc/loyalty/beacon-key"]
        #expect(try ServerOptions.parse([], environment: ["HOME": "/"])?.beaconKeyFile == nil)
        #expect(try ServerOptions.parse([], environment: environment)?.beaconKeyFile?.path == "/etc/loyalty/beacon-key")
        let given = try ServerOptions.parse(["--beacon-key-file", "/srv/key"], environment: environment)
        #expect(given?.beaconKeyFile?.path == "/srv/key")
    }

    @Test func trustedProxiesComeFromTheArgumentsOrTheEnvironment() throws {
        let environment = ["HOME": "/", "LOYALTY_TRUSTED_PROXIES": "10.0.0.5, 2001:db8::/32", "LOYALTY_PROXY_PROTOCOL": "1"]
        let fromEnvironment = try #require(try ServerOptions.parse([], environment: environment))
        #expect(fromEnvironment.clientAddresses.trustedProxies.map(\.description) == ["10.0.0.5/32", "2001:db8::/32"])
        #expect(fromEnvironment.clientAddresses.requiresProxyProtocol)
        let fromArguments = try #require(
            try ServerOptions.parse(["--trusted-proxy", "192.0.2.0/24", "--trusted-proxy", "::1"], environment: ["HOME": "/"]))
        #expect(fromArguments.clientAddresses.trustedProxies.map(\.description) == ["192.0.2.0/24", "::1/128"])
        #expect(!fromArguments.clientAddresses.requiresProxyProtocol)
        let defaults = try #require(try ServerOptions.parse([], environment: ["HOME": "/"]))
        #expect(defaults.clientAddresses == ClientAddressPolicy())
        for bad in [["LOYALTY_TRUSTED_PROXIES": "10.0.0.0/33"], ["LOYALTY_PROXY_PROTOCOL": "yes"],
            ["LOYALTY_PROXY_PROTOCOL": "1"]]
        {
            #expect(throws: UsageError.self, "\(bad)") {
                try ServerOptions.parse([], environment: bad.merging(["HOME": "/"]) { $1 })
            }
        }
    }
}

@Suite struct ContractTests {
    /// Every route the server answers is documented in openapi.yaml with the credential its table entry names,
    /// and nothing else is.
    @Test func openAPIDocumentsExactlyTheServedRoutesAndTheirCallers() {
        let documented = Dictionary(uniqueKeysWithValues: Operation.documented.map { ($0.description, $0.credential) })
        let served = Dictionary(uniqueKeysWithValues: Endpoints.unconnected.routes.map { ($0.name, $0.caller) })
        #expect(Set(documented.keys) == Set(served.keys))
        for (route, caller) in served {
            // The console's session routes take its cookie, which openapi.yaml's schemes do not name.
            let scheme: Credential? =
                switch caller {
                case .operator: .operatorToken
                case .retailer: .retailerKey
                case .till: .tillKey
                case .device: .deviceToken
                case .anyone, .console: nil
                }
            #expect(documented[route] == scheme, "\(route): the table says \(caller)")
        }
    }
}

extension ContractTests {
    /// `image_url` is validated by openapi.yaml's pattern itself (issue 41, item 14: a port passed the server and
    /// not the document): the document's pattern is the server's, and each URL below fares the same under both.
    @Test func anImageURLIsCheckedByTheDocumentsPattern() throws {
        let document = String(decoding: Documents.openAPI, as: UTF8.self)
        let line = try #require(
            document.split(separator: "\n").first { $0.contains(#"pattern: "^https?://"#) }, "no image_url pattern")
        let quoted = line.drop { $0 != "\"" }.dropFirst().dropLast()
        #expect(quoted.replacingOccurrences(of: #"\\"#, with: #"\"#) == Validation.imageURLPattern)
        let documented = try NSRegularExpression(pattern: Validation.imageURLPattern)
        let accepted = [
            "https://example.com/a.png", "http://cdn.example.com:8080/x.png?w=200&h=1", "https://1.2.3.4/p%20q.png",
            "https://example.com", "https://example.com:65535/", "https://example.com/a?b=c/d?e",
        ]
        let refused = [
            "https://example.com:0/", "https://example.com:65536/", "https://user@example.com/",
            "https://example.com/#top", "https://[::1]/", "ftp://example.com/", "https://example.com/a b",
            "https://example.com/%zz", "HTTPS://example.com/", "https://example.com/a\\b", "https:///a",
        ]
        for url in accepted + refused {
            let matches = documented.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)) != nil
            let valid = (try? Validation.imageURL(url, field: "image_url")) != nil
            #expect(matches == valid && valid == accepted.contains(url), "\(url)")
        }
    }
}

extension Endpoints {
    /// The routes' handlers on a database that is never reached: for what the table says of itself.
    static var unconnected: Endpoints {
        let database = Database(pool: PostgresPool(conninfo: "host=/nonexistent", size: 1), clock: { Date() })
        let keyring = BeaconKeyring.random()
        return Endpoints(
            database: database, operatorTokenDigest: [], openAPIDocument: [], beaconKeyring: keyring,
            secureBeacons: SecureBeaconTable(database: database, keyring: keyring), metrics: Metrics(),
            rateLimiter: RateLimiter(.unlimited))
    }
}
