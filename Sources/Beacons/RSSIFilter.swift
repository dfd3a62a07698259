/// Smooths the raw RSSI readings of one beacon.
///
/// The default is a Kalman filter that tracks the RSSI's level and its trend (a constant-velocity
/// model). A running average trades lag for noise: to flap less between proximity buckets it must
/// average longer, and then it trails a walking shopper. Tracking the trend lets the Kalman filter
/// smooth hard without that lag, so on a walk it changes bucket far less often than a running average
/// for the same tracking error (`RSSIFilterTests` measures this on synthetic noisy walks). Its
/// smoothing is stated in time, not in samples, so beacons advertising at 1 Hz and at 10 Hz are treated
/// alike. The running average stays available as the baseline (the Android Beacon Library's default
/// family).
///
/// One value per beacon; `update` is O(1) and does not allocate (the running average allocates its
/// window once, in `init`).
public struct RSSIFilter: Sendable {
    public enum Method: Sendable, Hashable {
        /// `accelerationNoise`: how quickly the RSSI's rate of change may itself change, in dB²/s³.
        /// `measurementNoise`: the variance of one reading around the true level, in dB².
        case kalman(accelerationNoise: Double, measurementNoise: Double)
        /// The mean of the last `window` readings.
        case runningAverage(window: Int)

        /// Chosen on the synthetic walks of the tests: readings 5 dB off on average, trends that change
        /// over a second or two (a shopper stopping or turning).
        public static let standard = Method.kalman(accelerationNoise: 0.5, measurementNoise: 25)

        /// Why this method cannot run, or nil when it can.
        public var problem: String? {
            switch self {
            case .kalman(let accelerationNoise, let measurementNoise):
                guard accelerationNoise.isFinite, accelerationNoise > 0, measurementNoise.isFinite,
                    measurementNoise > 0
                else { return "Kalman acceleration and measurement noise must be finite and greater than 0" }
            case .runningAverage(let window):
                guard (1...4096).contains(window) else {
                    return "running average window must be 1...4096 readings, got \(window)"
                }
            }
            return nil
        }
    }

    public let method: Method
    /// The filtered RSSI in dBm, nil before the first reading (or after `reset()`).
    public private(set) var value: Double?

    // Kalman state: the RSSI trend (dB/s), the covariance of (level, trend), the last reading's time.
    /// The Kalman filter's estimate of how fast the RSSI changes, dB/s (0 for the running average).
    public private(set) var trend = 0.0
    /// The Kalman filter's variance of `value`, dB² (0 for the running average).
    public private(set) var levelVariance = 0.0
    private var covariance = 0.0
    /// The Kalman filter's variance of `trend`, (dB/s)².
    public private(set) var trendVariance = 0.0
    private var lastTime = 0.0
    // Running-average state: a ring of the last readings and their sum.
    private var ring: [Double]
    private var next = 0
    private var count = 0
    private var sum = 0.0

    /// A trend prior: a shopper walking near a beacon moves its RSSI by a few dB per second.
    private static let initialTrendVariance = 4.0

    /// `method` should have no `problem`; settings out of range are clamped to the nearest valid ones.
    public init(_ method: Method) {
        self.method = method
        if case .runningAverage(let window) = method {
            ring = [Double](repeating: 0, count: min(max(window, 1), 4096))
        } else {
            ring = []
        }
    }

    /// Forgets every reading (a beacon heard again after being lost starts afresh), keeping storage.
    public mutating func reset() {
        value = nil
        trend = 0
        next = 0
        count = 0
        sum = 0
    }

    /// Feeds one reading taken at `time` (seconds) and returns the filtered RSSI.
    ///
    /// Inlined: a ranger calls it for every sighting.
    @discardableResult @inline(__always)
    public mutating func update(rssi: Double, at time: Double) -> Double {
        let filtered: Double
        switch method {
        case .kalman(let accelerationNoise, let measurementNoise):
            filtered = kalmanUpdate(
                rssi: rssi, at: time, q: max(accelerationNoise, .leastNormalMagnitude),
                r: max(measurementNoise, .leastNormalMagnitude))
        case .runningAverage:
            if count == ring.count {
                sum -= ring[next]
            } else {
                count += 1
            }
            ring[next] = rssi
            sum += rssi
            next = next + 1 == ring.count ? 0 : next + 1
            filtered = sum / Double(count)
        }
        value = filtered
        return filtered
    }

    @inline(__always)
    private mutating func kalmanUpdate(rssi: Double, at time: Double, q: Double, r: Double) -> Double {
        guard let level = value else {
            trend = 0
            levelVariance = r
            covariance = 0
            trendVariance = Self.initialTrendVariance
            lastTime = time
            return rssi
        }
        // Readings out of order are treated as simultaneous: time never runs backwards here.
        let dt = max(0, time - lastTime)
        lastTime = max(lastTime, time)
        // Predict: level moves by trend * dt; white acceleration noise widens the covariance.
        let predictedLevel = level + trend * dt
        let p00 = levelVariance + 2 * dt * covariance + dt * dt * trendVariance + q * dt * dt * dt / 3
        let p01 = covariance + dt * trendVariance + q * dt * dt / 2
        let p11 = trendVariance + q * dt
        // Correct with the reading.
        let innovation = rssi - predictedLevel
        let levelGain = p00 / (p00 + r)
        let trendGain = p01 / (p00 + r)
        trend += trendGain * innovation
        levelVariance = (1 - levelGain) * p00
        covariance = (1 - levelGain) * p01
        trendVariance = p11 - trendGain * p01
        return predictedLevel + levelGain * innovation
    }
}
