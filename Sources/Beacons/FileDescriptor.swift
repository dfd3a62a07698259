#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// close(2) under a name that the reader's and writer's own `close()` does not shadow.

func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
