extension String {
    /// One decimal place.
    public init(format1 value: Double) {
        self = ""
        appendFixed(value, decimals: 1)
    }

    /// `value` with a fixed number of decimals, without Foundation's formatter.
    public mutating func appendFixed(_ value: Double, decimals: Int) {
        guard value.isFinite else { return self += "null" }
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        if value < 0, scaled != 0 { self += "-" }
        self += String(scaled / scale)
        guard decimals > 0 else { return }
        self += "."
        let fraction = String(scaled % scale)
        self += String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}
