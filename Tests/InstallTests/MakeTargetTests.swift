import Foundation
import LoyaltyTesting
import Testing

/// Every `make` target the README names installs the tools its recipe and scripts run, so each works on a
/// fresh machine on its own (`make check` ran wrk, which only `make bench` installed).
@Suite struct MakeTargetTests {
    /// Tools the recipes, scripts and benchmark run, each with its Debian package.
    static let tools: [(command: String, package: String)] = [
        ("wrk", "wrk"), ("curl", "curl"), ("python3", "python3"), ("pgbouncer", "pgbouncer"), ("tshark", "tshark"),
        ("/usr/bin/time", "time"), ("setcap", "libcap2-bin"), ("gpsd", "gpsd"), ("tc", "iproute2"),
    ]

    /// The text of what `make TARGET` runs: the recipe (`make -n`), the scripts it names and the scripts
    /// those name, and the benchmark's sources when it runs the benchmark.
    private func whatRuns(_ target: String, root: URL) throws -> (recipe: String, everything: String) {
        let recipe = try Binary(at: "make").run(["-n", "-C", root.path, target])
        #expect(recipe.status == 0, "make -n \(target): \(recipe.stderr)")
        var everything = recipe.stdout
        var pending = Self.scripts(in: recipe.stdout)
        var read = Set<String>()
        while let script = pending.popLast() {
            guard read.insert(script).inserted,
                let text = try? String(contentsOf: root.appendingPathComponent(script), encoding: .utf8)
            else { continue }
            everything += "\n" + text
            pending += Self.scripts(in: text)
        }
        if recipe.stdout.contains("loyalty-bench") {
            let sources = root.appendingPathComponent("Benchmarks/loyalty-bench")
            for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
                everything += "\n" + (try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8))
            }
        }
        return (recipe.stdout, everything)
    }

    private static func scripts(in text: String) -> [String] {
        text.matches(of: /scripts\/[A-Za-z0-9_.-]+/).map { String($0.output) }
    }

    /// Whether `text` runs `command`: as a shell word in command position, or as a Swift string literal.
    private static func runs(_ command: String, in text: String) -> Bool {
        let escaped = NSRegularExpression.escapedPattern(for: command)
        let pattern = "(^|[\\s;|&(`$])\(escaped)\\s|\"\(escaped)\""
        return text.range(of: pattern, options: .regularExpression) != nil
    }

    /// The Debian packages the recipe installs (the `for p in ...` lists of its install lines).
    private static func installed(by recipe: String) -> Set<String> {
        var packages = Set<String>()
        for match in recipe.matches(of: /for p in ([^;]+);/) {
            packages.formUnion(match.output.1.split(separator: " ").map(String.init))
        }
        return packages
    }

    @Test func everyTargetTheReadmeNamesInstallsWhatItRuns() throws {
        let root = Repository.root
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        let phony = Set(makefile.matches(of: /\.PHONY:([^\n]+)/).flatMap { $0.output.1.split(separator: " ").map(String.init) })
        let targets = Set(readme.matches(of: /make ([a-z]+)/).map { String($0.output.1) }).intersection(phony)
        #expect(targets.isSuperset(of: ["demo", "test", "bench", "check", "fuzz", "install", "deps"]), "\(targets)")
        var checked = 0
        for target in targets.sorted() where target != "uninstall" && target != "clean" {
            let (recipe, everything) = try whatRuns(target, root: root)
            let installed = Self.installed(by: recipe)
            for (command, package) in Self.tools where Self.runs(command, in: everything) {
                #expect(installed.contains(package), "make \(target) runs \(command) but does not install \(package)")
                checked += 1
            }
        }
        #expect(checked >= 8)
    }

    @Test func theToolFinderFindsCommandsAndNotWords() {
        #expect(Self.runs("wrk", in: "  out=$(wrk -t2 -c4 url)"))
        #expect(Self.runs("python3", in: "python.arguments = [\"python3\", \"x.py\"]"))
        #expect(!Self.runs("wrk", in: "# the framework handles it"))
        #expect(!Self.runs("curl", in: "libcurl4-openssl-dev libpq-dev"))
    }
}
