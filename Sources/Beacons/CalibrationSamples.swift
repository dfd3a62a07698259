/// One beacon's RSSI readings for `MeasuredPowerCalibration`, the measured power its frames carry, and
/// the seconds they span.
public struct CalibrationSamples: Sendable {
    public let identity: BeaconIdentity
    public private(set) var rssi: [Int8] = []
    public private(set) var advertisedPower: Int8?
    private var first: Double?
    private var last: Double?

    public init(of identity: BeaconIdentity) { self.identity = identity }

    public var span: Double { (last ?? 0) - (first ?? 0) }

    /// Adds a sighting of the beacon (others are ignored); false once it falls beyond `seconds` after the first.
    @discardableResult
    public mutating func add(_ sighting: BeaconSighting, seconds: Double = .infinity) -> Bool {
        guard sighting.identity == identity else { return true }
        let start = first ?? sighting.time
        guard sighting.time - start <= seconds else { return false }
        first = start
        last = sighting.time
        rssi.append(sighting.rssi)
        advertisedPower = sighting.frame.measuredPower
        return true
    }

    /// The samples of the first `seconds` after the beacon is first heard in `capture`.
    public static func reading(
        _ capture: AdvertisingCapture, of identity: BeaconIdentity, seconds: Double
    ) throws(BTSnoopError) -> CalibrationSamples {
        var samples = CalibrationSamples(of: identity)
        while let sighting = try capture.nextSighting(), samples.add(sighting, seconds: seconds) {}
        return samples
    }
}
