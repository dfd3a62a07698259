import Foundation
import SystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// Small files of client state, written so a crash leaves either the old or the new content:
/// write a temporary file, fsync it, rename it over the old one, fsync the directory.
enum StateFile {
    /// Creates `directory` (and its parents) readable by the owner only.
    /// Creates `directory` and its missing parents (mode 0700). Another `loyalty` process may be creating
    /// the same directories at the same moment: one that already exists is success, not a failure.
    static func makeDirectory(_ directory: URL) throws(ClientError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return
        }
        let parent = directory.deletingLastPathComponent()
        if parent.path != directory.path { try makeDirectory(parent) }
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
            throw .io("cannot create \(directory.path): \(errorText())")
        }
    }

    /// Takes group's and others' access away from `path` when they have any, if it is this user's own file or
    /// folder (not a link, nor a shared folder with the sticky bit such as /tmp); returns what it did, or nil.
    static func narrow(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_uid == geteuid() else { return nil }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG || (kind == S_IFDIR && status.st_mode & S_ISVTX == 0) else { return nil }
        let mode = status.st_mode & 0o7777
        guard mode & 0o077 != 0, fchmod(fd, mode & ~0o077) == 0 else { return nil }
        return "\(path) was open to other users (mode \(String(mode, radix: 8))): now \(String(mode & ~0o077, radix: 8)), the owner's alone"
    }

    static func write(_ data: Data, to url: URL, mode: mode_t = 0o600) throws(ClientError) {
        try makeDirectory(url.deletingLastPathComponent())
        let temporary = url.path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .io("cannot write \(temporary): \(errorText())") }
        var failure: String? = nil
        if fchmod(fd, mode) != 0 { failure = errorText() }
        if failure == nil {
            do throws(SystemCallError) {
                try writeAll(data, to: fd)
            } catch {
                failure = error.description
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = errorText() }
        close(fd)
        if failure == nil, rename(temporary, url.path) != 0 { failure = errorText() }
        guard failure == nil else {
            unlink(temporary)
            throw .io("cannot write \(url.path): \(failure!)")
        }
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// The file's bytes, or nil when it does not exist.
    static func read(_ url: URL) throws(ClientError) -> Data? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw .io("cannot read \(url.path): \(error.localizedDescription)")
        }
    }

    static func remove(_ url: URL) throws(ClientError) {
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw .io("cannot remove \(url.path): \(errorText())")
        }
    }
}
