extension String {
    /// One decimal place.
    public init(format1 value: Double) {
        self = ""
        appendFixed(value, decimals: 1)
    }

    /// `value` with a fixed number of decimals, without Foundation's formatter (`JSONLineBuffer.fixed`).
    public mutating func appendFixed(_ value: Double, decimals: Int) {
        var text = JSONLineBuffer(capacity: 32)
        text.fixed(value, decimals: decimals)
        self += String(decoding: text.bytes, as: UTF8.self)
    }
}
