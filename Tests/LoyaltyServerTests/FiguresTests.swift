import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

@Suite struct FiguresTests {
    /// Shown, unique shoppers, redeemed, accepted and conversion land on their UTC days, per offer and in total;
    /// an offer with nothing in the period is left out, and another retailer's activity counts nowhere.
    @Test func figuresCountEachDayPerOfferAndInTotal() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let other = try server.registerRetailer("Other")
        let till = try server.createTillKey(matey, name: "Till").tillKey
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi", perShopperLimit: 5))
        try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Quiet"))
        let foreign = try server.putOffer(other, major: 1, minor: 1, OfferDraft(title: "Theirs"))
        let ann = try server.createAccount()
        let ben = try server.createAccount()
        let dayOne = server.clock.read()
        for (device, offer) in [(ann, sushi), (ben, sushi), (ann, foreign)] {
            let push = SeenPush(items: [SeenItem(offerID: offer.id, seenAt: dayOne)])
            #expect(try server.request("POST", "/v1/seen", token: device.deviceToken, json: push).status == 200)
        }
        let annsCode: Redemption = try server.redeem(ann, sushi.id).decode()
        _ = try server.redeem(ann, foreign.id)
        server.clock.advance(by: 86_400)
        #expect(try server.till("accept", annsCode.code, key: till).status == 200)
        _ = try server.redeem(ben, sushi.id)

        let figures: RetailerFigures = try server.request(
            "GET", "/v1/retailer/figures?days=3", token: matey.apiKey
        ).decode()
        #expect(figures.days == 3 && figures.total.count == 3)
        let today = String(LoyaltyJSON.formatTimestamp(server.clock.read()).prefix(10))
        let yesterday = String(LoyaltyJSON.formatTimestamp(dayOne).prefix(10))
        let dayBefore = String(LoyaltyJSON.formatTimestamp(dayOne.addingTimeInterval(-86_400)).prefix(10))
        #expect(figures.total.map(\.date) == [dayBefore, yesterday, today])
        #expect(figures.offers.map(\.title) == ["Sushi"], "the quiet offer and the other retailer's are left out")
        let days = try #require(figures.offers.first?.days)
        #expect(days[1] == DayFigures(date: yesterday, shown: 2, uniqueShoppers: 2, redeemed: 1, accepted: 0))
        #expect(days[2] == DayFigures(date: today, shown: 0, uniqueShoppers: 1, redeemed: 1, accepted: 1))
        #expect(days[0] == DayFigures(date: dayBefore, shown: 0, uniqueShoppers: 0, redeemed: 0, accepted: 0))
        #expect(figures.total[1].shown == 2 && figures.total[1].conversion == 0)
        #expect(figures.total[2].conversion == nil, "nothing was shown that day")

        for bad in ["days=0", "days=367", "days=x"] {
            #expect(try server.request("GET", "/v1/retailer/figures?\(bad)", token: matey.apiKey).status == 422)
        }
    }

    /// The beacon last heard longest ago comes first; one no shopper heard for the period is flagged.
    @Test func beaconsUnheardForTheirPeriodAreFlagged() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let heard = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Heard"))
        try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Never heard"))
        server.clock.advance(by: 10 * 86_400)
        let seenAt = server.clock.read()
        let shopper = try server.createAccount()
        let push = SeenPush(items: [SeenItem(offerID: heard.id, seenAt: seenAt)])
        #expect(try server.request("POST", "/v1/seen", token: shopper.deviceToken, json: push).status == 200)
        try server.putOffer(matey, major: 1, minor: 3, OfferDraft(title: "Just set up"))

        let health: BeaconHealthList = try server.request(
            "GET", "/v1/retailer/beacons?quiet_days=7", token: matey.apiKey
        ).decode()
        #expect(health.quietDays == 7)
        #expect(health.beacons.map(\.title) == ["Never heard", "Just set up", "Heard"])
        #expect(health.beacons.map(\.checkBattery) == [true, false, false])
        #expect(health.beacons.last?.lastHeardAt == seenAt)

        server.clock.advance(by: 8 * 86_400)
        let later: BeaconHealthList = try server.request(
            "GET", "/v1/retailer/beacons?quiet_days=7", token: matey.apiKey
        ).decode()
        #expect(later.beacons.filter(\.checkBattery).count == 3)
    }
}
