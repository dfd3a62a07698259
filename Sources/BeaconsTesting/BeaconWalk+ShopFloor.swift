import Beacons
import Foundation

extension BeaconWalk {
    /// Walks the proximity margins were not chosen on, each past one beacon like the counter walk's (measured power
    /// -59 dBm, 10 Hz, n = 2): other speeds, other stops, and the counter walk's linger mirrored (2.7 m, 0.9 dB inside
    /// the 3 m limit, arriving from far, where the counter walk's 3.3 m is past it arriving from far). A rule that
    /// wins on the counter walk by holding on to the class a shopper arrives in loses the mirrored one.
    public static func shopFloor(rssiNoise: Double, seed: UInt64) -> [(name: String, walk: BeaconWalk)] {
        let paths: [(String, [(Double, Double)])] = [
            ("linger 2.7 m (mirrored)", [(0, 8), (10, 8), (18.8, 2.7), (58.8, 2.7), (67.3, 8), (77, 8)]),
            ("linger 3.8 m", [(0, 0.4), (10, 0.4), (16, 3.8), (56, 3.8), (62, 0.4), (70, 0.4)]),
            ("linger 0.55 m", [(0, 4), (5, 4), (10.75, 0.55), (40.75, 0.55), (46.5, 4), (56, 4)]),
            ("browse at 1 m/s", [(0, 1.5), (20, 1.5), (23.5, 5), (43, 5), (48.75, 0.4), (63.75, 0.4), (70, 8), (80, 8)]),
            ("two stops", [(0, 6), (5, 6), (9, 2), (29, 2), (32, 0.3), (42, 0.3), (48, 4), (68, 4), (72, 9), (80, 9)]),
            ("slow pass, 0.3 m/s", [(0, 10), (5, 10), (37, 0.4), (42, 0.4), (74, 10), (80, 10)]),
            ("fast pass, 1.4 m/s", [(0, 12), (5, 12), (13.3, 0.4), (16, 0.4), (24.3, 12), (30, 12)]),
        ]
        let counter = counterLinger(rssiNoise: rssiNoise, seed: seed)
        return paths.map { name, path in
            var beacon = counter.beacons[0]
            beacon.path = path.map { Waypoint(time: $0.0, distance: $0.1) }
            let walk = BeaconWalk(
                beacons: [beacon], advertisingInterval: counter.advertisingInterval,
                pathLossExponent: counter.pathLossExponent, rssiNoise: rssiNoise, seed: seed)
            return (name, walk)
        }
    }
}
