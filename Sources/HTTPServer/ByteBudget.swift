import Synchronization

/// Bytes that requests in flight hold together, up to a limit.
final class ByteBudget: Sendable {
    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Takes `bytes`; false, taking nothing, when they would pass the limit.
    func take(_ bytes: Int) -> Bool {
        guard held.add(bytes, ordering: .relaxed).newValue > limit else { return true }
        held.subtract(bytes, ordering: .relaxed)
        return false
    }

    func give(_ bytes: Int) {
        held.subtract(bytes, ordering: .relaxed)
    }
}
