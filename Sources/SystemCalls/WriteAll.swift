import Foundation

/// Writes all of `bytes` to `descriptor` with write(2), again after a signal or a partial write, in as few writes
/// as the kernel takes: a line written whole never interleaves with another thread's (under PIPE_BUF on a pipe).
/// Stops at the first error, which says how many bytes went out before it.
public func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws(SystemCallError) {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            throw SystemCallError(code: errno, written: offset)
        }
        offset += written
    }
}

/// `writeAll` of an array's or `Data`'s bytes.
public func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32) throws(SystemCallError) {
    // withUnsafeBytes rethrows untyped: the failure is carried out as a value.
    let failure = bytes.withUnsafeBytes { buffer -> SystemCallError? in
        do throws(SystemCallError) { try writeAll(buffer, to: descriptor) } catch { return error }
        return nil
    }
    if let failure { throw failure }
}
