import Foundation
import LoyaltyTesting
import Testing

/// `make install` and `make uninstall` (scripts/install.sh), run on the debug binaries into a scratch DESTDIR,
/// and what they install checked with the tools that will read it: bash, zsh, fish, groff, systemd-analyze.
@Suite struct InstallTests {
    let script = Binary(at: Repository.root.appendingPathComponent("scripts/install.sh").path)
    let loyalty = Binary("loyalty")
    let server = Binary("loyalty-server")

    /// Every file `install` writes under DESTDIR (PREFIX=/usr/local), with its mode.
    static let installedFiles: [String: Int] = [
        "usr/local/bin/loyalty": 0o755,
        "usr/local/bin/loyalty-server": 0o755,
        "usr/local/share/man/man1/loyalty.1": 0o644,
        "usr/local/share/man/man8/loyalty-server.8": 0o644,
        "usr/local/share/bash-completion/completions/loyalty": 0o644,
        "usr/local/share/bash-completion/completions/loyalty-server": 0o644,
        "usr/local/share/zsh/site-functions/_loyalty": 0o644,
        "usr/local/share/zsh/site-functions/_loyalty-server": 0o644,
        "usr/local/share/fish/vendor_completions.d/loyalty.fish": 0o644,
        "usr/local/share/fish/vendor_completions.d/loyalty-server.fish": 0o644,
        "usr/local/lib/systemd/system/loyalty-server.service": 0o644,
        "usr/local/lib/systemd/user/loyalty-scan.service": 0o644,
        "usr/local/share/applications/loyalty.desktop": 0o644,
        "etc/loyalty/loyalty-server.env.example": 0o644,
    ]

    /// A fresh DESTDIR with everything installed in it; the caller removes it.
    func install() throws -> (destdir: URL, output: String) {
        let destdir = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-install-\(UUID())")
        let result = try script.run(
            ["install", loyalty.url.deletingLastPathComponent().path],
            environment: ["PREFIX": "/usr/local", "DESTDIR": destdir.path, "SETCAP": "0"])
        try #require(result.status == 0, "\(result.stderr)")
        return (destdir, result.stdout)
    }

    /// Regular files and symlinks under `directory`, by relative path, with their permission bits.
    func files(under directory: URL) throws -> [String: Int] {
        var found: [String: Int] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let path = enumerator?.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(path).path)
            if attributes[.type] as? FileAttributeType != .typeDirectory {
                found[path] = (attributes[.posixPermissions] as? Int) ?? -1
            }
        }
        return found
    }

    @Test func installsEveryFileAndUninstallRemovesThoseAndNothingElse() throws {
        let (destdir, output) = try install()
        defer { try? FileManager.default.removeItem(at: destdir) }
        #expect(try files(under: destdir) == Self.installedFiles)
        #expect(output.contains("sudo setcap cap_net_raw,cap_net_admin+ep \(destdir.path)/usr/local/bin/loyalty"))

        // The administrator's own settings, and a program of someone else's, must survive.
        let settings = destdir.appendingPathComponent("etc/loyalty/loyalty-server.env")
        let other = destdir.appendingPathComponent("usr/local/bin/other")
        for file in [settings, other] { try Data("kept\n".utf8).write(to: file) }
        let uninstall = try script.run(["uninstall"], environment: ["PREFIX": "/usr/local", "DESTDIR": destdir.path])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(Set(try files(under: destdir).keys) == ["etc/loyalty/loyalty-server.env", "usr/local/bin/other"])

        for file in [settings, other] { try FileManager.default.removeItem(at: file) }
        #expect(try script.run(["uninstall"], environment: ["DESTDIR": destdir.path]).status == 0)
        #expect(try files(under: destdir).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: destdir.appendingPathComponent("etc/loyalty").path))
    }

    @Test func installedProgramsAndManPagesShowOneVersion() throws {
        let (destdir, _) = try install()
        defer { try? FileManager.default.removeItem(at: destdir) }
        var versions: Set<String> = []
        for name in ["loyalty", "loyalty-server"] {
            let result = try Binary(at: destdir.appendingPathComponent("usr/local/bin/\(name)").path).run(["--version"])
            #expect(result.status == 0)
            let words = result.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            try #require(words.count == 2 && words[0] == name, "\(result.stdout)")
            #expect(words[1].split(separator: ".").count == 3 && words[1].split(separator: ".").allSatisfy { Int($0) != nil })
            versions.insert(words[1])
            #expect(try Binary(at: destdir.appendingPathComponent("usr/local/bin/\(name)").path).run(["--help"]).stdout
                .contains("--version"))
        }
        let version = try #require(versions.count == 1 ? versions.first : nil, "the two programs disagree: \(versions)")
        for page in ["man1/loyalty.1", "man8/loyalty-server.8"] {
            let text = try String(
                contentsOf: destdir.appendingPathComponent("usr/local/share/man/\(page)"), encoding: .utf8)
            #expect(text.split(separator: "\n").first?.contains("\"loyalty \(version)\"") == true, "\(page)")
        }
    }

    @Test func systemdAcceptsTheUnit() throws {
        let (destdir, _) = try install()
        defer { try? FileManager.default.removeItem(at: destdir) }
        let unit = try String(
            contentsOf: destdir.appendingPathComponent("usr/local/lib/systemd/system/loyalty-server.service"),
            encoding: .utf8)
        let settings = Dictionary(
            unit.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("=") }.map { line in
                let equals = line.firstIndex(of: "=")!
                return (String(line[..<equals]), [String(line[line.index(after: equals)...])])
            }, uniquingKeysWith: +)
        #expect(settings["ExecStart"] == ["/usr/local/bin/loyalty-server --data-dir /var/lib/loyalty-server"])
        #expect(settings["EnvironmentFile"] == ["-/etc/loyalty/loyalty-server.env"])
        #expect(settings["DynamicUser"] == ["yes"] && settings["StateDirectory"] == ["loyalty-server"])
        #expect(settings["KillSignal"] == ["SIGTERM"] && settings["Restart"] == ["on-failure"])
        #expect(settings["CapabilityBoundingSet"] == [""] && settings["NoNewPrivileges"] == ["yes"])
        #expect(settings["ExecReload"] == nil)

        // systemd-analyze checks that ExecStart can run, so the copy it reads points into DESTDIR. This
        // machine need not run systemd: verify loads the unit the way the manager would, offline.
        let directory = destdir.appendingPathComponent("verify")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let copy = directory.appendingPathComponent("loyalty-server.service")
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/", with: "ExecStart=\(destdir.path)/usr/local/")
            .write(to: copy, atomically: true, encoding: .utf8)
        let verify = try Binary(at: "systemd-analyze").run(["verify", "--man=no", copy.path])
        #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify.stderr)")
        // The hardening keeps the exposure that `systemd-analyze security` scores at 2.0 of 10 or below.
        let security = try Binary(at: "systemd-analyze").run(["security", "--offline=yes", "--threshold=20", copy.path])
        #expect(security.status == 0, "\(security.stdout)")
    }

    /// The scan as a user service: notifications, no terminal, restarts on failure, stops on SIGTERM; checked by
    /// systemd-analyze as the user manager would load it (no user manager runs here), and its command line
    /// accepted by the installed loyalty. The desktop entry its notifications name passes desktop-file-validate.
    @Test func systemdAcceptsTheUserUnitAndTheDesktopEntryIsValid() throws {
        let (destdir, output) = try install()
        defer { try? FileManager.default.removeItem(at: destdir) }
        #expect(output.contains("systemctl --user enable --now loyalty-scan"))
        let unit = try String(
            contentsOf: destdir.appendingPathComponent("usr/local/lib/systemd/user/loyalty-scan.service"), encoding: .utf8)
        let settings = Dictionary(
            unit.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("=") }.map { line in
                let equals = line.firstIndex(of: "=")!
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }, uniquingKeysWith: { $1 })
        let command = try #require(settings["ExecStart"])
        #expect(command == "/usr/local/bin/loyalty scan --notify --notify-on offers,enter")
        // The radio listens 10 % of the time unless the config's scan_power says otherwise (issue 47).
        #expect(settings["Environment"] == "LOYALTY_SCAN_POWER_DEFAULT=low")
        #expect(settings["Restart"] == "on-failure" && settings["KillSignal"] == "SIGTERM")
        #expect(settings["StandardOutput"] == "journal" && settings["WantedBy"] == "default.target")

        let directory = destdir.appendingPathComponent("verify")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let copy = directory.appendingPathComponent("loyalty-scan.service")
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/", with: "ExecStart=\(destdir.path)/usr/local/")
            .write(to: copy, atomically: true, encoding: .utf8)
        // The user manager's runtime directory: a scratch one, as no user session runs here.
        let runtime = destdir.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let verify = try Binary(at: "systemd-analyze").run(
            ["verify", "--user", "--man=no", copy.path], environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify.stderr)")

        // The installed loyalty takes that command line: with a capture instead of the radio it runs to its summary.
        let capture = destdir.appendingPathComponent("walk.btsnoop")
        let installed = Binary(at: destdir.appendingPathComponent("usr/local/bin/loyalty").path)
        let walk = ["beacon", "simulate", "--walk", "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1@0=1,5=1", "--write", capture.path]
        #expect(try installed.run(walk).status == 0)
        let arguments = command.split(separator: " ").dropFirst().map(String.init) + ["--replay", capture.path, "--offline"]
        let scan = try installed.run(arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""])
        // The journal's lines: plain text, no terminal's escapes; the summary closes it.
        #expect(scan.status == 0 && scan.stdout.contains("entered 8F0C1DDC") && !scan.stdout.contains("\u{1B}"))
        #expect(
            scan.stderr.contains("0 malformed events skipped\n") && scan.stderr.contains(" left waiting\n")
                && scan.stderr.hasSuffix("held back: none\n"), "\(scan.stderr)")
        #expect(scan.stderr.contains("notifications are off"), "\(scan.stderr)")

        let entry = destdir.appendingPathComponent("usr/local/share/applications/loyalty.desktop").path
        let validate = try Binary(at: "desktop-file-validate").run([entry])
        #expect(validate.status == 0 && validate.stdout.isEmpty && validate.stderr.isEmpty, "\(validate.stdout)\(validate.stderr)")
    }

    /// `COMMAND --help` of every command: its subcommands and its options, as the parser knows them.
    func helpTree(_ path: [String] = []) throws -> [(path: [String], commands: [String], options: [String])] {
        let help = try loyalty.run(path + ["--help"]).stdout
        var commands: [String] = []
        var options: [String] = []
        var section = ""
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasSuffix(":"), !line.hasPrefix(" ") { section = String(line) }
            guard line.hasPrefix("  "), let word = line.split(separator: " ").first else { continue }
            if section == "COMMANDS:", !word.hasPrefix("See") { commands.append(String(word)) }
            if section == "OPTIONS:", word.hasPrefix("--") { options.append(String(word)) }
        }
        return try [(path, commands, options)] + commands.flatMap { try helpTree(path + [$0]) }
    }

    @Test func manPagesRenderCleanlyAndDescribeEveryCommandAndOption() throws {
        let (destdir, _) = try install()
        defer { try? FileManager.default.removeItem(at: destdir) }
        func page(_ name: String) throws -> String {
            let file = destdir.appendingPathComponent("usr/local/share/man/\(name)").path
            let warnings = try Binary(at: "groff").run(["-man", "-ww", "-z", file])
            #expect(warnings.status == 0 && warnings.stderr.isEmpty, "\(name): \(warnings.stderr)")
            let text = try Binary(at: "groff").run(["-man", "-Tascii", "-P-cbou", file]).stdout
            return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let loyaltyPage = try page("man1/loyalty.1")
        let missing = try helpTree().flatMap { path, _, options in
            (path.isEmpty ? [] : [path.joined(separator: " ")]) + options
        }.filter { !loyaltyPage.contains($0) }
        #expect(missing.isEmpty, "loyalty.1 does not mention \(missing)")
        let serverPage = try page("man8/loyalty-server.8")
        let serverWords = try server.run(["--help"]).stdout.split(whereSeparator: \.isWhitespace)
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]'")) }
            .filter { $0.hasPrefix("--") || $0.hasPrefix("LOYALTY_") || $0 == "DATABASE_URL" }
        #expect(serverWords.count >= 7 && serverWords.allSatisfy(serverPage.contains), "\(serverWords)")
    }

    @Test func completionsOfferEveryCommandAndOption() throws {
        let (destdir, _) = try install()
        defer { try? FileManager.default.removeItem(at: destdir) }
        let share = destdir.appendingPathComponent("usr/local/share")
        let tree = try helpTree()

        // bash: at each command, an empty word completes its subcommands (a group) or options (a command),
        // and "--" its options.
        var calls = ["source '\(share.path)/bash-completion/completions/loyalty'"]
        calls.append("at() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _loyalty; echo \"${COMPREPLY[*]}\"; }")
        for (path, _, _) in tree {
            let words = (["loyalty"] + path).joined(separator: " ")
            calls += ["at \(words) ''", "at \(words) --"]
        }
        let bash = try Binary(at: "bash").run(["-c", calls.joined(separator: "\n")])
        #expect(bash.stderr.isEmpty, "\(bash.stderr)")
        let answers = bash.stdout.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.split(separator: " ").map(String.init)
        }
        try #require(answers.count >= tree.count * 2, "\(bash.stdout)")
        for (index, (path, commands, options)) in tree.enumerated() {
            #expect(answers[2 * index] == (commands.isEmpty ? options : commands), "bash at \(path)")
            #expect(answers[2 * index + 1] == options, "bash at \(path) --")
        }
        // Options before the command, with their values, are stepped over.
        let afterOptions = try Binary(at: "bash").run([
            "-c",
            calls[0...1].joined(separator: "\n")
                + "\nat loyalty --json sy\nat loyalty --server http://x --timeout 3 retailer of\nat loyalty --server u retailer --json offers ''",
        ])
        #expect(afterOptions.stdout == "sync\noffer offers\nimport export\n", "\(afterOptions.stdout)\(afterOptions.stderr)")
        let serverBash = try Binary(at: "bash").run([
            "-c",
            "source '\(share.path)/bash-completion/completions/loyalty-server'; "
                + "COMP_WORDS=(loyalty-server --); COMP_CWORD=1; _loyalty_server; echo \"${COMPREPLY[*]}\"",
        ])
        let serverOptions = try server.run(["--help"]).stdout.split(separator: "\n")
            .compactMap { $0.split(separator: " ").first.flatMap { $0.hasPrefix("--") ? String($0) : nil } }
        #expect(serverBash.stdout.split(whereSeparator: \.isWhitespace).map(String.init) == serverOptions)

        #expect(try loyalty.run(["--generate-completion-script", "tcsh"]).status == 64)

        // zsh: the scripts parse (completing needs a terminal, which a test does not have).
        for file in ["_loyalty", "_loyalty-server"] {
            let zsh = try Binary(at: "zsh").run(["-n", share.appendingPathComponent("zsh/site-functions/\(file)").path])
            #expect(zsh.status == 0 && zsh.stderr.isEmpty, "\(file): \(zsh.stderr)")
        }
        // zsh's walk to the command (bash's and fish's are checked likewise), with _arguments and _describe stubbed to print what they are given: options
        // before the command (and their values) are stepped over, and what follows it is the command's.
        let zshScript = share.appendingPathComponent("zsh/site-functions/_loyalty").path
        let walk = try Binary(at: "zsh").run([
            "-c",
            """
            eval "$(sed -e '$d' '\(zshScript)')"
            _arguments() { print -r -- "${words[*]}"; state=command; }
            _describe() { print -r -- "${commands[1]%%:*}"; }
            at() { words=("$@"); CURRENT=$#; _loyalty; }
            at loyalty --server http://x --timeout 3 retailer of
            at loyalty retailer --json offers ''
            """,
        ])
        #expect(walk.stdout == "loyalty of\nregister\nloyalty \nimport\n", "\(walk.stdout)\(walk.stderr)")

        // fish completes without a terminal: a group's subcommands, a command's options, the server's options.
        let fishDirectory = share.appendingPathComponent("fish/vendor_completions.d").path
        let fish = try Binary(at: "fish").run([
            "--no-config", "-c",
            """
            source \(fishDirectory)/loyalty.fish; source \(fishDirectory)/loyalty-server.fish
            complete -C 'loyalty retailer store '; echo ==
            complete -C 'loyalty sync --'; echo ==
            complete -C 'loyalty-server --'; echo ==
            complete -C 'loyalty --server http://x --json retailer store '
            """,
        ])
        #expect(fish.stderr.isEmpty, "\(fish.stderr)")
        let fishAnswers = fish.stdout.components(separatedBy: "==\n").map { block in
            Set(block.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) })
        }
        let store = try #require(tree.first { $0.path == ["retailer", "store"] })
        let sync = try #require(tree.first { $0.path == ["sync"] })
        // The last: options before the command, and their values, are stepped over.
        #expect(fishAnswers == [Set(store.commands), Set(sync.options), Set(serverOptions), Set(store.commands)])
    }
}
