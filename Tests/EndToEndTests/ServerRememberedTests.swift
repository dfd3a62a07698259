import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The server a device was set up with is remembered: `account create`, `account link` and `retailer
/// register` save it in the config, and later commands go there unless --server or LOYALTY_SERVER says
/// otherwise; `config show` and `config set` show and change it; a retailer's API key can be printed and
/// set. The real `loyalty` against the real server.
@Suite struct ServerRememberedTests {
    /// No LOYALTY_SERVER: what the config says must decide (StoryDevice sets it otherwise).
    static let unset = ["LOYALTY_SERVER": ""]
    /// Bound but not listening: every request is refused at once.
    static let nowhere = "http://127.0.0.1:9"

    static func config(_ device: StoryDevice, _ options: [String] = [], _ environment: [String: String] = unset) throws
        -> [String: Any]
    {
        try #require(try device.ok(["config", "show", "--json"] + options, environment).jsonLines.first)
    }

    @Test func accountCreateSavesItsServerAndTheNextCommandsGoThere() throws {
        let server = try StoryServer.shared.get()
        let shopper = server.device()
        try shopper.ok(["account", "create", "--server", server.url], Self.unset)
        let config = try Self.config(shopper)
        #expect(config["server"] as? String == server.url && config["server_from"] as? String == "config", "\(config)")
        let synced = try shopper.run(["sync"], Self.unset)
        #expect(synced.status == 0, "the sync went to 127.0.0.1:8080: \(synced.stderr)")
        let shown = try shopper.ok(["account", "show"], Self.unset).stdout
        #expect(shown.contains("server        \(server.url) (from the config)"), "\(shown)")
        let elsewhere = try shopper.ok(["account", "show"], ["LOYALTY_SERVER": Self.nowhere]).stdout
        #expect(elsewhere.contains("server        \(Self.nowhere) (from LOYALTY_SERVER; saved: \(server.url))"), "\(elsewhere)")
        let json = try #require(try shopper.ok(["account", "show", "--json"], Self.unset).jsonLines.first)
        #expect(json["server"] as? String == server.url && json["server_from"] as? String == "config", "\(json)")
    }

    @Test func accountLinkAndRetailerRegisterSaveTheirServer() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        let code = try #require(try phone.ok(["account", "link", "--json"]).jsonLines.first?["code"] as? String)
        let tablet = server.device()
        try tablet.ok(["account", "link", code, "--server", server.url], Self.unset)
        #expect(try Self.config(tablet)["server"] as? String == server.url)
        #expect(try tablet.run(["sync"], Self.unset).status == 0)

        let retailer = server.device()
        try retailer.ok(
            ["retailer", "register", "--name", "Remembered", "--server", server.url],
            Self.unset.merging(["LOYALTY_ADMIN_TOKEN": server.operatorToken]) { $1 })
        #expect(try Self.config(retailer)["server"] as? String == server.url)
        let offers = try retailer.run(["retailer", "offers"], Self.unset)
        #expect(offers.status == 0, "\(offers.stderr)")
    }

    /// --server, else LOYALTY_SERVER, else the config, else http://127.0.0.1:8080: as `config show` says and
    /// as a sync goes.
    @Test func theFlagBeatsTheEnvironmentWhichBeatsTheConfigWhichBeatsTheDefault() throws {
        let server = try StoryServer.shared.get()
        let shopper = try server.newAccount()
        try shopper.ok(["config", "set", "server", server.url])

        let flag = try Self.config(shopper, ["--server", Self.nowhere], ["LOYALTY_SERVER": "http://127.0.0.1:10"])
        #expect(flag["server"] as? String == Self.nowhere && flag["server_from"] as? String == "--server", "\(flag)")
        let environment = try Self.config(shopper, [], ["LOYALTY_SERVER": Self.nowhere])
        #expect(environment["server_from"] as? String == "LOYALTY_SERVER", "\(environment)")
        #expect(try Self.config(shopper)["server_from"] as? String == "config")
        let fresh = try Self.config(server.device())
        #expect(fresh["server"] as? String == "http://127.0.0.1:8080" && fresh["server_from"] as? String == "default")

        // The server chosen is the one the token is then refused for: it was issued by the config's.
        for (options, environment) in [(["--server", Self.nowhere], Self.unset), ([], ["LOYALTY_SERVER": Self.nowhere])] {
            let refused = try shopper.run(["sync"] + options, environment)
            #expect(refused.status == 77 && refused.stderr.contains("not \(Self.nowhere), so it was not sent"), "\(refused.stderr)")
        }
        #expect(try shopper.run(["sync", "--server", server.url], ["LOYALTY_SERVER": Self.nowhere]).status == 0)
        #expect(try shopper.run(["sync"], Self.unset).status == 0)
        let text = try shopper.ok(["config", "show"], ["LOYALTY_SERVER": Self.nowhere]).stdout
        #expect(text.contains("server             \(Self.nowhere) (from LOYALTY_SERVER; saved: \(server.url))"), "\(text)")
    }

    @Test func configSetChangesTheServerAndRefusesWhatIsNotOne() throws {
        let server = try StoryServer.shared.get()
        let shopper = try server.newAccount()
        // The account's token goes along only when asked (IssuingServerTests); here the same server moved away.
        let set = try shopper.ok(["config", "set", "server", Self.nowhere, "--move-credentials"], Self.unset)
        #expect(set.stdout.contains("server set to \(Self.nowhere) in "), "\(set.stdout)")
        #expect(try shopper.run(["sync"], Self.unset).status == 75)

        for (key, value) in [("server", "ftp://example.com"), ("server", "not a url"), ("colour", "red"), ("total_timeout_s", "0")] {
            let refused = try shopper.run(["config", "set", key, value], Self.unset)
            #expect(refused.status == 64, "\(key) \(value): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix("error: "), "\(refused.stderr)")
        }
        #expect(try Self.config(shopper)["server"] as? String == Self.nowhere, "a refused value changes nothing")

        let json = try #require(
            try shopper.ok(["config", "set", "server", server.url, "--move-credentials", "--json"]).jsonLines.first)
        #expect(json["event"] as? String == "config_set" && json["value"] as? String == server.url, "\(json)")
        #expect(try shopper.run(["sync"], Self.unset).status == 0)
        var status = stat()
        #expect(stat(shopper.home.appendingPathComponent("config.json").path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    /// A config whose server is not a URL (edited by hand) is shown, not fatal, and `config set` mends it.
    @Test func aBadSavedServerIsShownAndMended() throws {
        let server = try StoryServer.shared.get()
        let shopper = try server.newAccount()
        let file = shopper.home.appendingPathComponent("config.json")
        try #"{"server": "htp:/oops"}"#.write(to: file, atomically: true, encoding: .utf8)
        let sync = try shopper.run(["sync"], Self.unset)
        #expect(sync.status == 64 && sync.stderr.contains("'htp:/oops' is not a server URL"), "\(sync.stderr)")
        let shown = try Self.config(shopper)
        #expect(shown["server_valid"] as? Bool == false, "\(shown)")
        try shopper.ok(["config", "set", "server", server.url], Self.unset)
        #expect(try shopper.run(["sync"], Self.unset).status == 0)
    }

    /// A key rotated elsewhere (as the console does) reaches the CLI through `retailer key set`: typed at a
    /// terminal, which does not echo it; or from a pipe. A key the server refuses is not saved.
    @Test func aRetailerKeyRotatedElsewhereIsSetAndShown() throws {
        let server = try StoryServer.shared.get()
        let retailer = try server.retailer("Rotating", uuid: UUID().uuidString)
        let first = try retailer.ok(["retailer", "key", "show"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(first.count > 16, "\(first)")
        let elsewhere = server.device()
        let rotated = try elsewhere.ok(["retailer", "rotate-key"], ["LOYALTY_RETAILER_KEY": first]).stdout
        let second = try #require(rotated.components(separatedBy: "new key (shown once): ").last)
            .trimmingCharacters(in: .whitespacesAndNewlines)

        let refused = try retailer.run(["retailer", "key", "set", "lr_not_a_key_of_anyone"])
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(try retailer.ok(["retailer", "key", "show"]).stdout == first + "\n", "a refused key is not saved")

        let typing = try TerminalRun(["retailer", "key", "set"], retailer)
        defer { typing.kill() }
        #expect(typing.waitFor("API key: "), "\(typing.transcript)")
        typing.send(second + "\n")
        #expect(typing.waitForExit() == 0, "\(typing.transcript)")
        #expect(typing.transcript.contains("API key of Rotating saved in "), "\(typing.transcript)")
        #expect(!typing.transcript.contains(second), "the key was echoed: \(typing.transcript)")
        #expect(typing.localModes() & tcflag_t(ECHO) != 0, "echo is back on")

        let shown = try #require(try retailer.ok(["retailer", "key", "show", "--json"]).jsonLines.first)
        #expect(shown["api_key"] as? String == second && shown["from"] as? String == "config", "\(shown)")
        #expect(try retailer.run(["retailer", "offers"]).status == 0)

        // From a pipe, into a home that had no key.
        let workstation = server.device()
        let piped = try Binary(at: "bash").run(
            ["-c", "printf '%s\\n' \"$KEY\" | \"$LOYALTY\" retailer key set --json"],
            environment: [
                "KEY": second, "LOYALTY": Binary("loyalty").url.path, "LOYALTY_HOME": workstation.home.path,
                "LOYALTY_SERVER": server.url,
            ])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.jsonLines.first?["name"] as? String == "Rotating" && !piped.stdout.contains(second), "\(piped.stdout)")
        #expect(try Self.config(workstation)["retailer"] as? String == "Rotating")
        #expect(try workstation.run(["retailer", "offers"], Self.unset).status == 0, "its server was saved with it")
    }
}
