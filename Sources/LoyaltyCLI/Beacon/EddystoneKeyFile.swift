import Arguments
import Beacons
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An Eddystone-EID beacon's identity key, in a file only its owner may read, and the beacon's time counter kept
/// beside it in `KEYFILE.counter` (the spec has a beacon keep its counter across restarts: the resolver's copy of
/// it runs on whether the beacon does or not). The counter file says when the counter was what: written on the
/// first run, the counter is the seconds since then, across restarts and time off the air.
struct EddystoneKeyFile {
    let path: String
    var counterPath: String { path + ".counter" }

    /// The 16-byte key: 32 hex digits (spaces and line ends around them ignored) or the 16 bytes themselves.
    /// A file that others may read or write is refused (exit 77), as ssh refuses a private key's.
    func identityKey() throws -> [UInt8] {
        let contents = try OwnerOnlyFile.contents(of: path, what: "the identity key")
        let text = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 32, let key = [UInt8](pastedHex: text) { return key }
        guard contents.count == 16 else {
            throw CommandFailure(
                "the identity key \(path) is neither 32 hex digits nor 16 bytes", exitCode: ExitCode.dataError)
        }
        return [UInt8](contents)
    }

    /// The time counter at `now` (Unix seconds), with the fraction of its second: the one saved plus the time since
    /// it was saved (never less, should the clock step back); 0 the first time.
    func counter(now: Double) throws -> Double {
        guard let contents = FileManager.default.contents(atPath: counterPath) else { return 0 }
        let words = String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let saved = UInt32(words[0]), let savedAt = Double(words[1]), savedAt.isFinite else {
            throw CommandFailure(
                "\(counterPath) is not a time counter (COUNTER UNIX-SECONDS): remove it only if the beacon was "
                    + "registered anew, since the resolver counts on", exitCode: ExitCode.dataError)
        }
        return Double(saved) + max(0, now - savedAt)
    }

    /// Starts the counter at 0 at `now`, in a file of mode 0600 beside the key, unless it was started before.
    func saveFirstCounter(at now: Double) throws {
        guard !FileManager.default.fileExists(atPath: counterPath) else { return }
        let text = "0 \(now)\n"
        guard
            FileManager.default.createFile(
                atPath: counterPath + ".new", contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]),
            rename(counterPath + ".new", counterPath) == 0
        else {
            throw CommandFailure("cannot write the time counter \(counterPath)", exitCode: ExitCode.ioError)
        }
    }
}
