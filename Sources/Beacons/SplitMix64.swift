import Foundation

/// SplitMix64 (Steele, Lea and Flood, 2014): a small seeded generator, so synthetic captures are identical on
/// every run and every machine.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    package mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Standard normal, by Box-Muller.
    package mutating func nextGaussian() -> Double {
        let radius = (-2 * log(1 - nextUnit())).squareRoot()
        return radius * cos(2 * Double.pi * nextUnit())
    }

    package mutating func nextByte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    package mutating func nextAddress() -> BluetoothAddress {
        BluetoothAddress(wire: (nextByte(), nextByte(), nextByte(), nextByte(), nextByte(), nextByte() | 0xC0))
    }
}
