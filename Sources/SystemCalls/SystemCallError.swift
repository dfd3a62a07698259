#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A system call that failed: its errno, and for `writeAll` how many bytes went out before it.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public var written = 0

    public init(code: Int32, written: Int = 0) {
        self.code = code
        self.written = written
    }

    public var description: String { errorText(code) }
}

/// strerror(3)'s text for `code`, by default the calling thread's last errno.
public func errorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
