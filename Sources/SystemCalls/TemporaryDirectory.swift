import Foundation

/// A new directory, only its owner's (mode 0700), named `prefix` and six random characters, in `parent`; mkdtemp(3)
/// picks a name no one else has.
public func makeTemporaryDirectory(
    _ prefix: String, in parent: URL = FileManager.default.temporaryDirectory
) throws(SystemCallError) -> URL {
    var template = Array(parent.appendingPathComponent(prefix + "XXXXXX").path.utf8CString)
    guard let path = mkdtemp(&template) else { throw SystemCallError(code: errno) }
    return URL(fileURLWithPath: String(cString: path), isDirectory: true)
}
