import Foundation
import LoyaltyTesting
import Testing

/// `account create` on a full disk: the cache is made before the server is asked, so a disk with room for the
/// token but not for the cache stops the command with no account made and says what to do, where it used to make
/// the account, save its token, and then report only the cache's error (exit 74).
@Suite(.serialized) struct FullDiskTests {
    /// A tmpfs of `size` mounted for the test (mounting needs root, which CI is).
    final class TinyDisk {
        let url: URL

        init(size: String) throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-full-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try mountTool(["mount", "-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", url.path])
        }

        deinit {
            try? mountTool(["umount", url.path])
            try? FileManager.default.removeItem(at: url)
        }

        var filler: URL { url.appendingPathComponent("filler") }

        /// Writes a file until the disk is full, then gives `bytes` of it back.
        func fill(leaving bytes: Int) throws {
            let fd = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0 else { throw ReadOnlyFolder.Failure(description: "cannot create \(filler.path)") }
            defer { close(fd) }
            let chunk = [UInt8](repeating: 0xAA, count: 4096)
            var size = 0
            while true {
                let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                if written <= 0 { break }
                size += written
            }
            guard errno == ENOSPC, ftruncate(fd, off_t(max(0, size - bytes))) == 0 else {
                throw ReadOnlyFolder.Failure(description: "filling \(url.path) stopped with errno \(errno)")
            }
        }
    }

    @Test(.enabled(if: getuid() == 0 || runningUnderCI, "mounting a tmpfs needs root"))
    func creatingAnAccountOnAFullDiskMakesNoAccount() throws {
        let server = try StoryServer.shared.get()
        // Room, once the filler goes, for a new cache: its 13 pages of 16 KB, as many in the log, and the log's index.
        let disk = try TinyDisk(size: "1m")
        let home = disk.url.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let device = StoryDevice(server: server, home: home)
        // Room for the token's file (a page), not for the cache.
        try disk.fill(leaving: 8192)

        let refused = try device.run(["account", "create"])
        #expect(refused.status == 74, "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was asked of the server: make room in \(home.path), then run it again"),
            "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("device.json").path))

        try FileManager.default.removeItem(at: disk.filler)
        try device.ok(["account", "create"])
        try device.ok(["sync"])
    }
}
