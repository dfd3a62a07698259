import Beacons
import Foundation
import Testing

@Suite struct BeaconIdentityOrderTests {
    /// `<` compares the UUID's bytes; it must order as the identities' text does.
    @Test func orderIsTheOrderOfTheDescription() {
        var random = SplitMix64(seed: 15)
        let uuids = (0..<8).map { _ in UUID() } + [UUID(uuidString: "00000000-0000-0000-0000-000000000000")!]
        let identities = (0..<400).map { _ in
            BeaconIdentity(
                uuid: uuids[Int(random.next() % UInt64(uuids.count))], major: UInt16(random.next() % 3),
                minor: UInt16(truncatingIfNeeded: random.next()))
        }
        let byText = identities.sorted {
            ($0.uuid.uuidString, $0.major, $0.minor) < ($1.uuid.uuidString, $1.major, $1.minor)
        }
        #expect(identities.sorted() == byText)
        for (a, b) in zip(identities, identities.reversed()) {
            #expect((a == b) == (a.description == b.description))
            if a == b { #expect(a.hashValue == b.hashValue) }
        }
    }

    /// The identity holds its UUID as two words: every UUID comes back as it went in, byte for byte.
    @Test func theUUIDComesBackAsItWentIn() {
        var random = SplitMix64(seed: 26)
        for _ in 0..<200 {
            let (high, low) = (random.next(), random.next())
            let uuid = withUnsafeBytes(of: (high, low)) { UUID(uuid: $0.load(as: uuid_t.self)) }
            var identity = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
            #expect(identity.uuid == uuid)
            #expect(identity.uuid.uuidString == uuid.uuidString)
            #expect(identity.description == "\(uuid.uuidString):1:2")
            identity.uuid = matey
            #expect(identity == BeaconIdentity(uuid: matey, major: 1, minor: 2))
            #expect(identity.uuid.uuidString == "8F0C1DDC-11E5-4A07-8910-425941B072F9")
        }
    }
}
