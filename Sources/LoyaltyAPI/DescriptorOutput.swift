import Glibc

/// Writes all of `bytes` to `descriptor` with write(2), again after a signal or a partial write, in as few writes
/// as the kernel takes: a line written whole never interleaves with another thread's (under PIPE_BUF on a pipe).
/// Stops at the first error (a closed pipe or a full disk has no one to tell).
public func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}
