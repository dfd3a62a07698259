import Beacons
import Foundation
import Testing

/// A row of the fixtures README's table: a capture and what it holds.
struct CaptureFixture: CustomTestStringConvertible, Sendable {
    var file: String
    var holds: String
    var identities: Set<BeaconIdentity>
    var measuredPower: Int8?

    var testDescription: String { file }

    /// Numbers the "what it holds" column states, e.g. "412 legacy advertising reports" -> 412.
    func count(_ pattern: String) -> Int? {
        guard let match = holds.firstMatch(of: try! Regex("([0-9][0-9,]*) \(pattern)")),
            let text = match.output[1].substring
        else { return nil }
        return Int(text.filter(\.isNumber))
    }

    static let all: [CaptureFixture] = {
        guard
            let readme = try? String(contentsOf: fixturesDirectory.appendingPathComponent("README.md"), encoding: .utf8)
        else { return [] }
        return readme.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 6, cells[1].hasSuffix(".btsnoop") else { return nil }
            return CaptureFixture(file: cells[1], holds: cells[4], identitiesText: cells[5])
        }
    }()

    /// "UUID 20594/62207 and 20597/62207 (measured power -62)", "UUID with 100/19641, 102/19641", or "none".
    init(file: String, holds: String, identitiesText: String) {
        self.file = file
        self.holds = holds
        let uuid = identitiesText.firstMatch(
            of: /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/
        )
        .flatMap { UUID(uuidString: String($0.output)) }
        identities = Set(
            identitiesText.matches(of: /([0-9]+)\/([0-9]+)/).compactMap { match in
                guard let uuid, let major = UInt16(match.output.1), let minor = UInt16(match.output.2) else {
                    return nil
                }
                return BeaconIdentity(uuid: uuid, major: major, minor: minor)
            })
        measuredPower = identitiesText.firstMatch(of: /measured power (-?[0-9]+)/).flatMap { Int8($0.output.1) }
    }
}

struct Replay {
    var identities: Set<BeaconIdentity> = []
    var measuredPowers: Set<Int8> = []
    var statistics: CaptureStatistics
    var times: [Double] = []

    init(path: String) throws {
        let capture = try AdvertisingCapture(path: path)
        while let sighting = try capture.nextSighting() {
            identities.insert(sighting.identity)
            measuredPowers.insert(sighting.frame.measuredPower)
            times.append(sighting.time)
        }
        statistics = capture.statistics
    }
}

@Suite struct CaptureFixtureTests {
    @Test func everyCaptureHasARow() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: fixturesDirectory.path)
            .filter { $0.hasSuffix(".btsnoop") }
        #expect(!files.isEmpty)
        #expect(Set(files) == Set(CaptureFixture.all.map(\.file)))
    }

    @Test(arguments: CaptureFixture.all)
    func replaysToExactlyItsIdentities(_ fixture: CaptureFixture) throws {
        let replay = try Replay(path: fixturesDirectory.appendingPathComponent(fixture.file).path)
        #expect(replay.identities == fixture.identities)
        if let power = fixture.measuredPower {
            #expect(replay.measuredPowers == [power])
        }
        if let packets = fixture.count("packets") {
            #expect(replay.statistics.records == packets)
        }
        if let reports = fixture.count("(?:legacy |LE Extended |extended )?[Aa]dvertising [Rr]eports")
            ?? fixture.count("extended reports")
        {
            #expect(replay.statistics.advertisingReports == reports)
        }
        if fixture.holds.contains("no advertising") {
            #expect(replay.statistics.advertisingReports == 0)
        }
        if let malformed = fixture.count("malformed advertising events") {
            #expect(replay.statistics.malformed == malformed)
        }
        #expect(replay.times == replay.times.sorted(), "capture time runs forward")
    }

    /// The juicessh capture's vendor commands (0xFD57) carry 4C 00 02 15 in their parameters: a command is not an
    /// advertisement, so it must not count as a beacon frame.
    @Test func commandCarryingAppleBytesIsNotABeacon() throws {
        let path = fixturesDirectory.appendingPathComponent("juicessh-no-beacons-vendor-trap.btsnoop").path
        let reader = try BTSnoopReader(path: path)
        var commandsWithAppleBytes = 0
        while let record = try reader.next() {
            if record.packetType == .command, Array(record.packet).firstRange(of: [0x4C, 0x00, 0x02, 0x15]) != nil {
                commandsWithAppleBytes += 1
            }
        }
        #expect(commandsWithAppleBytes == 2)
        let replay = try Replay(path: path)
        #expect(replay.statistics.beaconFrames == 0)
        #expect(replay.identities.isEmpty)
    }
}
