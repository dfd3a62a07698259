import Foundation
import LoyaltyTesting
import Testing

/// A revoked device can follow the advice it is given, and the device you are on is not revoked by accident.
@Suite struct DeviceRevocationTests {
    @Test func aRevokedDeviceRejoinsAsItsMessageSays() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        try phone.ok(["devices", "revoke", try id(of: tablet)])

        let refused = try tablet.run(["sync"])
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("loyalty account link --replace CODE"), "\(refused.stderr)")

        let code = try #require(try phone.ok(["account", "link", "--json"]).jsonLines.first?["code"] as? String)
        let withoutReplace = try tablet.run(["account", "link", code])
        #expect(withoutReplace.status != 0)
        #expect(withoutReplace.stderr.contains("--replace"), "\(withoutReplace.stderr)")
        // The advice, as printed: the same code still works, because the refusal did not spend it.
        try tablet.ok(["account", "link", "--replace", code])
        try tablet.ok(["sync"])
        let devices = try phone.ok(["devices", "--json"]).jsonLines
        #expect(devices.filter { $0["revoked_at"] == nil || $0["revoked_at"] is NSNull }.count == 2, "\(devices)")
    }

    @Test func revokingThisDeviceNeedsConsent() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        let own = try id(of: phone)

        let unasked = try phone.run(["devices", "revoke", own])
        #expect(unasked.status == 64)
        #expect(unasked.stderr.contains("--yes"), "\(unasked.stderr)")
        try phone.ok(["sync"])

        let declined = try onTerminal(phone, ["devices", "revoke", own], answering: "n\n")
        #expect(declined.status == 1)
        #expect(declined.output.contains("[y/N]") && declined.output.contains("not revoked"), "\(declined.output)")
        try phone.ok(["sync"])

        let accepted = try onTerminal(phone, ["devices", "revoke", own], answering: "y\n")
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(try phone.run(["sync"]).status == 77)

        let other = try server.newAccount()
        try other.ok(["devices", "revoke", "--yes", try id(of: other)])
        #expect(try other.run(["sync"]).status == 77)
    }

    /// The id `devices` marks as the current one on `device`.
    private func id(of device: StoryDevice) throws -> String {
        let devices = try device.ok(["devices", "--json"]).jsonLines
        return try #require(devices.first { $0["current"] as? Bool == true }?["id"] as? String)
    }

    /// Runs `loyalty` with a pseudo-terminal as its standard input, through script(1), typing `answer`.
    private func onTerminal(
        _ device: StoryDevice, _ arguments: [String], answering answer: String
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = ([Binary("loyalty").url.path] + arguments).joined(separator: " ")
        process.arguments = ["--quiet", "--return", "--command", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "LOYALTY_HOME": device.home.path, "LOYALTY_SERVER": device.server.url,
        ]) { $1 }
        // The answer comes from a file, not a pipe: a write to a pipe whose reader has exited would
        // kill the whole test process with SIGPIPE.
        let typed = device.home.appendingPathComponent("typed-answer")
        try Data(answer.utf8).write(to: typed)
        let output = Pipe()
        process.standardInput = try FileHandle(forReadingFrom: typed)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
