import Digest
import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// The resolver's table as windows turn and beacons are added: what it resolves stays exactly the three windows of
/// each beacon (SecureBeaconTests has the rules of resolution themselves).
@Suite struct SecureBeaconTableTests {
    private let secure = SecureBeaconTests()

    private func resolves(
        _ server: TestServer, _ device: DeviceCredentials, _ provisioning: BeaconProvisioning, windows: Int
    ) throws -> Bool {
        let now = server.clock.read()
        let heard = Sighting(eid: Hex.text(try secure.eid(provisioning, at: now, windows: windows)), heardAt: now)
        let answer: SightingResolution = try secure.resolve(server, device, [heard]).decode()
        return answer.beacons.count == 1
    }

    /// Windows of 16 s turning under a loaded table, by turns (each under a minute after the load) and then by a load
    /// (a turn a minute after it): at every step the windows either side of now resolve and those two away do not.
    @Test func aTurnKeepsResolutionContinuous() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let provisioning = try secure.secure(server, matey, 1, 1, SecureBeaconRequest(exponent: 4))
        let ann = try server.createAccount()
        for step in 0..<12 {
            for windows in -2...2 {
                let resolved = try resolves(server, ann, provisioning, windows: windows)
                #expect(resolved == (abs(windows) <= 1), "step \(step), \(windows) windows off")
            }
            server.clock.advance(by: step % 3 == 2 ? 5 : 16)
        }
    }

    /// A beacon provisioned here mid-window resolves at once; one another instance provisioned (straight into the
    /// database, so this table is not told) resolves from the first turn a minute after this table's load.
    @Test func aBeaconAddedMidWindowResolves() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let first = try secure.secure(server, matey, 1, 1)
        let ann = try server.createAccount()
        #expect(try resolves(server, ann, first, windows: 0))
        server.clock.advance(by: 30)
        let second = try secure.secure(server, matey, 1, 2)
        #expect(try resolves(server, ann, second, windows: 0))
        let access = try #require(try server.database.retailer(apiKey: matey.apiKey))
        let elsewhere = try server.database.secureBeacon(
            retailer: access.retailer, major: 1, minor: 3, exponent: 10, form: .eddystone,
            keyring: server.beaconKeyring)
        #expect(try !resolves(server, ann, elsewhere, windows: 0))
        // The first beacon's window turns 256 s after its provisioning (counter 65,536).
        server.clock.advance(by: 256 - 30)
        #expect(try resolves(server, ann, elsewhere, windows: 0))
        #expect(try resolves(server, ann, first, windows: 0) && resolves(server, ann, second, windows: 0))
    }

    /// Beacons on clocks of their own, of both forms, turned second by second and by jumps forward and back: the
    /// index finds each beacon's three windows and nothing two windows away (a removal from the hash index leaves
    /// every other entry reachable), and holds nothing else (some clocks start near 0: their window -1 has no EID).
    @Test func theIndexHoldsExactlyEachBeaconsThreeWindows() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let uuids = (0..<3).map { _ in UUID() }
        let beacons: [SecureBeacon] = (0..<400).map { (n: Int) -> SecureBeacon in
            let key: [UInt8] = Array(SHA256.hash(Array("key \(n)".utf8)).prefix(16))
            let form: SecureBeaconForm = n % 4 == 0 ? .ibeacon : .eddystone
            return SecureBeacon(
                retailerID: uuids[n % 3], retailerName: "Retailer \(n % 3)", uuid: uuids[n % 3], major: UInt16(n),
                minor: 1, exponent: UInt8(n % 5 + 2), form: form, identityKey: key,
                counterOrigin: Int64(n * 37 % 5000), counterAt: start.addingTimeInterval(Double(n % 97)))
        }
        var index = try SecureBeaconIndex(beacons: beacons, at: start)
        var now = start
        for step in Array(repeating: 3.0, count: 20) + [50, -30, 200, 13, 5000, -4000] {
            now = now.addingTimeInterval(step)
            try index.turn(at: now)
            // A window before the counter's 0 has no identity.
            var held = 0
            for (n, beacon) in beacons.enumerated() {
                let current = (beacon.counterOrigin + Int64(now.timeIntervalSince(beacon.counterAt).rounded(.down)))
                    >> beacon.exponent
                for window in (current - 2)...(current + 2) where window >= 0 {
                    let eid = try EddystoneEID.ephemeralID(
                        identityKey: beacon.identityKey, exponent: beacon.exponent,
                        counter: UInt32(window << beacon.exponent))
                    var sighting = Sighting(eid: Hex.text(eid), heardAt: now)
                    if beacon.form == .ibeacon {
                        let major = UInt16(eid[0]) << 8 | UInt16(eid[1])
                        let minor = UInt16(eid[2]) << 8 | UInt16(eid[3])
                        sighting = Sighting(uuid: beacon.uuid, major: major, minor: minor, heardAt: now)
                    }
                    let found = index.lookup(sighting)
                    if (window - current).magnitude <= 1 {
                        held += 1
                        #expect(found?.beacon == n && found?.window == window, "beacon \(n) window \(window)")
                    } else {
                        #expect(found == nil, "beacon \(n) window \(window)")
                    }
                }
            }
            #expect(index.identityCount == held)
        }
    }
}
