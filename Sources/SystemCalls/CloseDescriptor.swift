import Foundation

/// close(2) under a name that a type's own `close()` does not shadow.
public func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
