import Foundation
import LoyaltyTesting
import Testing

/// A retailer's cap of shows per shopper per day (issue 44), through the real binaries and server: an offer with
/// `--shows-per-day 2` shows at most twice a UTC day to an account, counted on both its linked devices, and again
/// the next day (the server's clock moved on a day); bad caps are refused; CSV carries the cap there and back.
@Suite struct OfferShowsPerDayTests {
    /// `loyalty` with a home of its own against `server`.
    struct Device {
        let home: URL
        let server: TestServer

        init(_ server: TestServer) throws {
            self.server = server
            home = try ThrowawayDirectory.make("loyalty-shows-per-day")
        }

        func run(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
            try Binary("loyalty").run(
                arguments,
                environment: ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.baseURL].merging(environment) { $1 })
        }

        @discardableResult
        func ok(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
            let result = try run(arguments, environment)
            try #require(result.status == 0, "loyalty \(arguments.joined(separator: " ")): \(result.stderr)")
            return result
        }

        /// The titles a replay of `walk` showed, in order.
        func scan(_ walk: URL) throws -> [String] {
            try ok(["scan", "--replay", walk.path, "--json"]).jsonLines.compactMap { line in
                guard line["event"] as? String == "offer" else { return nil }
                return (line["offer"] as? [String: Any])?["title"] as? String
            }
        }
    }

    /// A walk that comes near the beacon UUID:1:1 `times` times, for 4 s each, 8 s apart (far in between).
    static func walk(_ device: Device, _ uuid: String, times: Int) throws -> URL {
        let file = device.home.appendingPathComponent("walk-\(times).btsnoop")
        var points = ["0=20"]
        for index in 0..<times {
            let t = 8 * index + 2
            points += ["\(t)=20", "\(t + 1)=1", "\(t + 5)=1", "\(t + 6)=20"]
        }
        points.append("\(8 * times + 8)=20")
        try device.ok(["beacon", "simulate", "--write", file.path, "--walk", "\(uuid):1:1@" + points.joined(separator: ",")])
        return file
    }

    @Test func aCapOfTwoADayHoldsOnBothDevicesAndResetsTheNextDay() throws {
        let clock = TestClock.machine()
        let server = try TestServer(.socket, clock: clock)
        let uuid = UUID().uuidString
        let store = try Device(server)
        try store.ok(
            ["retailer", "register", "--name", "Daily \(uuid.prefix(8))", "--uuid", uuid],
            ["LOYALTY_ADMIN_TOKEN": server.operatorToken])
        try store.ok(["retailer", "offer", "set", "1", "1", "--title", "Daily deal", "--shows-per-day", "2"])
        let listed = try #require(try store.ok(["retailer", "offers", "--json"]).jsonLines.first)
        #expect(listed["shows_per_day"] as? Int == 2, "\(listed)")
        #expect(try store.ok(["retailer", "offers"]).stdout.contains("shown 2/day"))

        let phone = try Device(server)
        try phone.ok(["account", "create"])
        let code = try #require(try phone.ok(["account", "link", "--json"]).jsonLines.first?["code"] as? String)
        let tablet = try Device(server)
        try tablet.ok(["account", "link", code, "--name", "tablet"])
        let once = try Self.walk(phone, uuid, times: 1)
        let thrice = try Self.walk(phone, uuid, times: 3)

        // The phone shows it once; the tablet, knowing that show from the server, once more; then neither again.
        try phone.ok(["sync"])
        #expect(try phone.scan(once) == ["Daily deal"])
        try phone.ok(["sync"])
        try tablet.ok(["sync"])
        #expect(try tablet.scan(thrice) == ["Daily deal"])
        try tablet.ok(["sync"])
        try phone.ok(["sync"])
        #expect(try phone.scan(thrice).isEmpty)
        #expect(try tablet.scan(thrice).isEmpty)
        let export = try #require(
            try JSONSerialization.jsonObject(with: Data(try phone.ok(["account", "export"]).stdout.utf8)) as? [String: Any])
        let counted = try #require((export["day_shows"] as? [[String: Any]])?.first, "\(export)")
        #expect(counted["shows"] as? Int == 2, "\(counted)")

        // A day later (the server's clock; a catalog change tells the devices): twice again, then no more.
        clock.advance(by: 86_400)
        try store.ok(["retailer", "offer", "set", "1", "2", "--title", "Another"])
        try phone.ok(["sync"])
        #expect(try phone.scan(thrice) == ["Daily deal", "Daily deal"])
        try phone.ok(["sync"])
        try tablet.ok(["sync"])
        #expect(try tablet.scan(thrice).isEmpty)

        // An offer without the cap still shows once ever.
        try store.ok(["retailer", "offer", "set", "1", "1", "--title", "Daily deal"])
        #expect(try store.ok(["retailer", "offers", "--json"]).jsonLines.first?["shows_per_day"] is NSNull)
    }

    @Test func aBadCapIsRefusedClearly() throws {
        let server = try TestServer(.socket)
        let uuid = UUID().uuidString
        let store = try Device(server)
        try store.ok(
            ["retailer", "register", "--name", "Capped \(uuid.prefix(8))", "--uuid", uuid],
            ["LOYALTY_ADMIN_TOKEN": server.operatorToken])
        for value in ["0", "-1", "101", "99999999999999999999", "twice"] {
            let result = try store.run(["retailer", "offer", "set", "1", "1", "--title", "Never", "--shows-per-day=\(value)"])
            #expect(result.status == 64, "\(value): \(result.status) \(result.stderr)")
            #expect(
                result.stderr.contains("shows_per_day: must be an integer from 1 to 100")
                    || result.stderr.contains("a whole number from 1 to 100"), "\(value): \(result.stderr)")
        }
        // The API refuses it too, naming the field.
        let key = try #require(try store.ok(["retailer", "key", "show", "--json"]).jsonLines.first?["api_key"] as? String)
        let answer = try server.request(
            "PUT", "/v1/retailer/offers/1/1", token: key, rawJSON: #"{"title":"Never","shows_per_day":1000}"#)
        #expect(answer.status == 422 && answer.text.contains("shows_per_day"), "\(answer.status) \(answer.text)")
        #expect(try store.ok(["retailer", "offers", "--json"]).jsonLines.isEmpty)

        // By CSV: the line and the field are named, and nothing is imported.
        let file = store.home.appendingPathComponent("bad.csv")
        try Data("major,minor,title,shows_per_day\n1,1,Fine,3\n1,2,Never,0\n".utf8).write(to: file)
        let refused = try store.run(["retailer", "offers", "import", file.path])
        #expect(refused.status == 65 && refused.stderr.contains("line 3") && refused.stderr.contains("shows_per_day"), "\(refused.stderr)")
        #expect(try store.ok(["retailer", "offers", "--json"]).jsonLines.isEmpty)
    }

    @Test func csvCarriesTheCapThereAndBack() throws {
        let server = try TestServer(.socket)
        let uuid = UUID().uuidString
        let store = try Device(server)
        try store.ok(
            ["retailer", "register", "--name", "Carried \(uuid.prefix(8))", "--uuid", uuid],
            ["LOYALTY_ADMIN_TOKEN": server.operatorToken])
        let file = store.home.appendingPathComponent("offers.csv")
        try Data("major,minor,title,shows_per_day\n1,1,Lunch deal,3\n1,2,Once,\n".utf8).write(to: file)
        #expect(try store.ok(["retailer", "offers", "import", file.path, "--json"]).jsonLines.first?["created"] as? Int == 2)
        let offers = try store.ok(["retailer", "offers", "--json"]).jsonLines
        #expect(offers.map { $0["shows_per_day"] as? Int } == [3, nil], "\(offers)")

        let exported = store.home.appendingPathComponent("exported.csv")
        try store.ok(["retailer", "offers", "export", "--output", exported.path])
        let text = try String(contentsOf: exported, encoding: .utf8)
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.first?.hasSuffix(",schedule,shows_per_day") == true, "\(text)")
        #expect(lines.count > 2 && lines[1].hasSuffix(",3") && lines[2].hasSuffix(","), "\(text)")
        // Imported again, nothing changes; with the cap changed, one offer is updated.
        #expect(try store.ok(["retailer", "offers", "import", exported.path, "--json"]).jsonLines.first?["unchanged"] as? Int == 2)
        try Data(text.replacingOccurrences(of: ",3\r\n", with: ",5\r\n").utf8)
            .write(to: exported)
        #expect(try store.ok(["retailer", "offers", "import", exported.path, "--json"]).jsonLines.first?["updated"] as? Int == 1)
        #expect(try store.ok(["retailer", "offers", "--json"]).jsonLines.first?["shows_per_day"] as? Int == 5)
    }
}
