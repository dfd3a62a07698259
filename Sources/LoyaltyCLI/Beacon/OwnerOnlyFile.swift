import Arguments
import Foundation

/// A file that holds a beacon's secret (an identity key, a provisioning document): read only when no group or other
/// permission bit is set, as ssh reads a private key.
enum OwnerOnlyFile {
    /// The file's bytes; exit 74 when it cannot be read, 77 (with the `chmod 600` that fixes it) when others may
    /// read or write it. `what` names it in the messages: "the identity key".
    static func contents(of path: String, what: String) throws -> Data {
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: path) } catch {
            throw CommandFailure("cannot read \(what) \(path): \(error.localizedDescription)", exitCode: ExitCode.ioError)
        }
        let mode = (attributes[.posixPermissions] as? Int ?? 0) & 0o777
        guard mode & 0o077 == 0 else {
            throw CommandFailure(
                "\(what) \(path) may be read by others (mode \(String(mode, radix: 8))): "
                    + "`chmod 600 \(path)`, and think of the key as seen", exitCode: ExitCode.noPermission)
        }
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read \(what) \(path)", exitCode: ExitCode.ioError)
        }
        return contents
    }
}
