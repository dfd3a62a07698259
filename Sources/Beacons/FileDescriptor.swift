#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The C calls under names that the reader's and writer's own methods do not shadow.

func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}

func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
