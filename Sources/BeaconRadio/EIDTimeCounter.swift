/// An EID beacon's time counter while it advertises: `start` at the start (with the fraction of its second, so that
/// the windows turn on the counter's seconds, not the start's), one a second from there. Its EID changes when the
/// counter's 2^K-second window turns.
public struct EIDTimeCounter: Hashable, Sendable {
    public var exponent: UInt8
    public var start: Double

    public init(exponent: UInt8, start: Double) {
        self.exponent = exponent
        self.start = start
    }

    /// The counter `elapsed` seconds after the start: it counts whole seconds. A time computed as a window's turn is
    /// in the new window, not at the end of the one before: the sum may land just under the whole number.
    func counter(elapsed: Double) -> UInt32 {
        UInt32(truncatingIfNeeded: Int64((start + max(0, elapsed) + 1e-6).rounded(.down)))
    }

    /// The seconds after the start when the window under way at `elapsed` turns.
    func nextTurn(after elapsed: Double) -> Double {
        let window = Double(UInt64(1) << exponent)
        let now = Double(counter(elapsed: elapsed))
        return ((now / window).rounded(.down) + 1) * window - start
    }
}
