/// The measured power to program into a beacon (its RSSI at 1 m), from RSSI samples taken while a receiver
/// is held 1 m away: the mean of the samples left after outliers are rejected, rounded to whole dBm.
///
/// Outliers are readings farther from the median than `outlierThreshold` robust standard deviations, the
/// robust standard deviation being 1.4826 x the median absolute deviation (MAD), which equals the standard
/// deviation for Gaussian noise but ignores up to half the samples being wild (a body between the devices,
/// a reflection). RSSI comes in whole dB, so a quiet beacon's MAD can be 0: the deviation is never taken
/// below `minimumDeviation`.
public struct MeasuredPowerCalibration: Hashable, Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Samples that must remain after outlier rejection.
        public var minimumSamples: Int
        public var outlierThreshold: Double
        /// dB.
        public var minimumDeviation: Double

        public init(minimumSamples: Int = 20, outlierThreshold: Double = 3, minimumDeviation: Double = 1) {
            self.minimumSamples = minimumSamples
            self.outlierThreshold = outlierThreshold
            self.minimumDeviation = minimumDeviation
        }

        /// Why this configuration cannot run, or nil when it can.
        public var problem: String? {
            guard minimumSamples >= 1 else { return "the minimum sample count must be at least 1" }
            guard outlierThreshold.isFinite, outlierThreshold > 0, minimumDeviation.isFinite, minimumDeviation > 0
            else { return "the outlier threshold and the minimum deviation must be finite and greater than 0" }
            return nil
        }
    }

    /// What to program: `meanRSSI` rounded, dBm.
    public var measuredPower: Int8
    /// The mean of the samples kept, dBm.
    public var meanRSSI: Double
    /// The median of all samples, dBm.
    public var medianRSSI: Double
    /// The spread: the standard deviation of the samples kept, dB (0 for a single sample).
    public var standardDeviation: Double
    public var samplesUsed: Int
    public var samplesRejected: Int

    /// RSSI 127 means "not available" in HCI reports: such readings are not samples and are ignored.
    public init(rssi readings: [Int8], configuration: Configuration = Configuration()) throws(CalibrationError) {
        if let problem = configuration.problem { throw .invalidConfiguration(problem) }
        let samples = readings.filter { $0 != 127 }.map(Double.init)
        guard !samples.isEmpty else {
            throw .tooFewSamples(used: 0, rejected: 0, minimum: configuration.minimumSamples)
        }
        let median = Self.median(samples)
        let deviation = max(
            1.4826 * Self.median(samples.map { abs($0 - median) }), configuration.minimumDeviation)
        let kept = samples.filter { abs($0 - median) <= configuration.outlierThreshold * deviation }
        let rejected = samples.count - kept.count
        guard kept.count >= configuration.minimumSamples else {
            throw .tooFewSamples(used: kept.count, rejected: rejected, minimum: configuration.minimumSamples)
        }
        let mean = kept.reduce(0, +) / Double(kept.count)
        let squares = kept.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        meanRSSI = mean
        medianRSSI = median
        // The mean of readings within -127...20 stays within them: it fits an Int8.
        measuredPower = Int8(mean.rounded())
        standardDeviation = kept.count > 1 ? (squares / Double(kept.count - 1)).squareRoot() : 0
        samplesUsed = kept.count
        samplesRejected = rejected
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

public enum CalibrationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than `minimum` samples remained after `rejected` outliers were set aside.
    case tooFewSamples(used: Int, rejected: Int, minimum: Int)
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .tooFewSamples(let used, let rejected, let minimum):
            let outliers = rejected > 0 ? " (after rejecting \(rejected) outliers)" : ""
            return "only \(used) RSSI samples of the beacon\(outliers); calibration needs at least \(minimum): "
                + "hold the receiver 1 m from the beacon and listen longer"
        case .invalidConfiguration(let problem):
            return "invalid calibration settings: \(problem)"
        }
    }
}
