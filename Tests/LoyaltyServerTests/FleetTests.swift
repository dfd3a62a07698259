import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

@Suite struct FleetTests {
    /// The fleet holds every beacon with a live offer, every beacon the retailer named, and every beacon shoppers
    /// heard under an offer since removed; sightings land on their days, quiet beacons say why, and another
    /// retailer's beacons, names and sightings count nowhere.
    @Test func theFleetListsOffersNamesAndBeaconsHeardWithoutAnOffer() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi", category: "food"))
        let sale = try server.putOffer(matey, major: 5, minor: 5, OfferDraft(title: "Sale"))
        try server.putOffer(matey, major: 2, minor: 1, OfferDraft(title: "Never heard"))
        let theirs = try server.putOffer(other, major: 7, minor: 7, OfferDraft(title: "Theirs"))
        let ann = try server.createAccount()
        let dayOne = server.clock.read()
        let push = SeenPush(items: [sushi, sale, theirs].map { SeenItem(offerID: $0.id, seenAt: dayOne) })
        #expect(try server.request("POST", "/v1/seen", token: ann.deviceToken, json: push).status == 200)
        #expect(try server.request("DELETE", "/v1/retailer/offers/5/5", token: matey.apiKey).status == 204)
        let label = BeaconLabel(name: "Back door", placement: "above the exit")
        #expect(try server.request("PUT", "/v1/retailer/fleet/9/9", token: matey.apiKey, json: label).status == 201)
        #expect(try server.request("PUT", "/v1/retailer/fleet/9/9", token: matey.apiKey, json: label).status == 200)
        #expect(
            try server.request("PUT", "/v1/retailer/fleet/7/7", token: other.apiKey, json: BeaconLabel(name: "Theirs"))
                .status == 201)
        server.clock.advance(by: 86_400)

        let fleet: BeaconFleet = try server.request(
            "GET", "/v1/retailer/fleet?days=3&quiet_days=7", token: matey.apiKey
        ).decode()
        #expect(fleet.days == 3 && fleet.quietDays == 7 && fleet.next == nil)
        #expect(fleet.firstDay == String(LoyaltyJSON.formatTimestamp(dayOne.addingTimeInterval(-86_400)).prefix(10)))
        #expect(fleet.beacons.map { "\($0.major):\($0.minor)" } == ["1:1", "2:1", "5:5", "9:9"])
        let yesterday = String(LoyaltyJSON.formatTimestamp(dayOne).prefix(10))
        let heard = fleet.beacons[0]
        #expect(heard.offerID == sushi.id && heard.category == "food" && heard.lastHeardAt == dayOne)
        #expect(heard.sightings == [BeaconDay(date: yesterday, sightings: 1)])
        #expect(!heard.quiet && heard.note == nil)
        let withoutOffer = fleet.beacons[2]
        #expect(withoutOffer.offerID == nil && withoutOffer.title == nil && withoutOffer.lastHeardAt == dayOne)
        #expect(withoutOffer.note?.contains("has no offer") == true)
        let named = fleet.beacons[3]
        #expect(named.name == "Back door" && named.placement == "above the exit" && named.lastHeardAt == nil)

        server.clock.advance(by: 8 * 86_400)
        let later: BeaconFleet = try server.request("GET", "/v1/retailer/fleet", token: matey.apiKey).decode()
        #expect(later.days == 14 && later.beacons.allSatisfy(\.quiet))
        #expect(later.beacons[0].note?.contains("check its battery") == true)
        #expect(later.beacons[1].note?.contains("never heard") == true)
    }

    /// A year of a fleet of thousands once came whole, every beacon with 366 days of zeros (at 100,000 beacons an
    /// 18 GB server): now it comes in pages of at most `limit` beacons, each with only the days it was heard.
    @Test func aYearOfAManyBeaconFleetComesInPagesOfTheDaysHeard() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let csv = "major,minor,title\n" + (0..<1_200).map { "\($0 / 100 + 1),\($0 % 100),Offer \($0)" }
            .joined(separator: "\n")
        #expect(try server.importOffers(matey, csv).status == 200)
        let heard = try server.putOffer(matey, major: 3, minor: 50, OfferDraft(title: "Heard"))
        let ann = try server.createAccount()
        let push = SeenPush(items: [SeenItem(offerID: heard.id, seenAt: server.clock.read())])
        #expect(try server.request("POST", "/v1/seen", token: ann.deviceToken, json: push).status == 200)

        var beacons: [FleetBeacon] = []
        var after: String?
        var pages = 0
        repeat {
            let reply = try server.request(
                "GET", "/v1/retailer/fleet?days=366" + (after.map { "&after=\($0)" } ?? ""), token: matey.apiKey)
            #expect(reply.body.count < 200_000, "a page of \(reply.body.count) bytes")
            let page: BeaconFleet = try reply.decode()
            #expect(page.beacons.count <= Validation.fleetPageLimit.upperBound)
            beacons += page.beacons
            after = page.next
            pages += 1
        } while after != nil && pages < 10
        #expect(pages == 3 && beacons.count == 1_200)
        #expect(Set(beacons.map { "\($0.major):\($0.minor)" }).count == 1_200)
        #expect(beacons.filter { !$0.sightings.isEmpty }.map { "\($0.major):\($0.minor)" } == ["3:50"])
        let small: BeaconFleet = try server.request(
            "GET", "/v1/retailer/fleet?limit=2&after=3.49", token: matey.apiKey).decode()
        #expect(small.beacons.map(\.minor) == [50, 51] && small.next == "3.51")
        #expect(small.beacons[0].sightings.map(\.sightings) == [1])
    }

    @Test func badLabelsAndPeriodsAreRefusedWithTheirField() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        for (body, field) in [
            (#"{"name":""}"#, "name"), (#"{"name":"a\u0007b"}"#, "name"),
            (#"{"name":"ok","placement":"\#(String(repeating: "x", count: 501))"}"#, "placement"),
            (#"{"name":"ok","colour":"red"}"#, "colour"),
        ] {
            let reply = try server.request(
                "PUT", "/v1/retailer/fleet/1/1", token: matey.apiKey, rawJSON: body)
            #expect(reply.status == 422 || reply.status == 400, "\(body): \(reply.status) \(reply.text)")
            #expect(reply.text.contains(field), "\(body): \(reply.text)")
        }
        #expect(
            try server.request("PUT", "/v1/retailer/fleet/65536/1", token: matey.apiKey, json: BeaconLabel(name: "x"))
                .status == 422)
        for bad in ["days=0", "quiet_days=367", "days=x", "limit=0", "limit=501", "after=1", "after=65536.0"] {
            #expect(try server.request("GET", "/v1/retailer/fleet?\(bad)", token: matey.apiKey).status == 422)
        }
    }
}
