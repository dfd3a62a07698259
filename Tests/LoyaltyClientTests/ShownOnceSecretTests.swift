import Foundation
import LoyaltyAPI
import Testing

@testable import LoyaltyClient

/// A secret the server shows once is never lost to a state folder that cannot be written (EndToEndTests' SecretSavingTests do the same through `loyalty` with a read-only folder).
@Suite struct ShownOnceSecretTests {
    /// A state folder that cannot be made, whoever runs the test: its parent is a file.
    private func unwritableHome() throws -> ClientHome {
        let file = try temporaryDirectory().appendingPathComponent("a-file")
        try Data().write(to: file)
        let folder = file.appendingPathComponent("loyalty")
        return ClientHome(configDirectory: folder, dataDirectory: folder)
    }

    @Test func aReadOnlyStateFolderIsFoundBeforeTheServerIsAsked() throws {
        let home = try unwritableHome()
        do {
            try home.checkWritable()
            Issue.record("an unwritable folder passed the check")
        } catch {
            #expect((error.message ?? "").contains(home.configDirectory.path) && (error.message ?? "").contains("nothing was asked"))
        }
        // A folder that does not exist yet is made.
        let fresh = try temporaryDirectory().appendingPathComponent("a/b")
        try ClientHome(configDirectory: fresh, dataDirectory: fresh.appendingPathComponent("data")).checkWritable()
        #expect(FileManager.default.fileExists(atPath: fresh.appendingPathComponent("data").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: fresh.path) == ["data"], "the probe is gone")
    }

    @Test func anUnsavedRetailerKeyIsShownWithWhatToDo() throws {
        let home = try unwritableHome()
        let credentials = RetailerCredentials(id: UUID(), name: "Matey's", uuid: UUID(), apiKey: "lk_secret123")
        do {
            try home.saveNewRetailerKey(ClientConfig(retailer: Issued(credentials, issuer: nil)), oldKeyStillWorks: true)
            Issue.record("saving into a read-only folder succeeded")
        } catch {
            #expect((error.message ?? "").contains("LOYALTY_RETAILER_KEY=lk_secret123"), "\(error)")
            #expect((error.message ?? "").contains("old key keeps working"), "\(error)")
        }
    }

    @Test func unsavedDeviceCredentialsAreShownWithWhereToPutThem() throws {
        let home = try unwritableHome()
        let device = DeviceCredentials(accountID: UUID(), deviceID: UUID(), deviceToken: "ld_token456")
        do {
            try home.saveNewDevice(Issued(device, issuer: nil))
            Issue.record("saving into a read-only folder succeeded")
        } catch {
            #expect((error.message ?? "").contains("\"device_token\":\"ld_token456\""), "\(error)")
            #expect((error.message ?? "").contains(home.deviceFile.path), "\(error)")
        }
    }

    /// A write replaces the file whole or not at all: no temporary file is left, and the old content stays
    /// when the new cannot be written.
    @Test func stateFilesAreReplacedWhole() throws {
        let directory = try temporaryDirectory()
        let home = ClientHome(configDirectory: directory, dataDirectory: directory)
        try home.saveConfig(ClientConfig(server: "http://one.example"))
        try home.saveConfig(ClientConfig(server: "http://two.example"))
        #expect(try home.loadConfig().server == "http://two.example")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["config.json"])
        let mode = try FileManager.default.attributesOfItem(atPath: home.configFile.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
