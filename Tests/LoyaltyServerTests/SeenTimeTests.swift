import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// A device cannot report a sighting from the future, nor of an offer outside its window.
@Suite struct SeenTimeTests {
    @Test func aSeenTimePastTheServersClockIsTakenAsNow() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let shopper = try server.createAccount()
        let push = try server.request(
            "POST", "/v1/seen", token: shopper.deviceToken,
            rawJSON: #"{"items":[{"offer_id":"\#(offer.id)","seen_at":"9999-12-31T23:59:59Z"}]}"#)
        #expect(push.status == 200, "\(push.text)")
        #expect(try push.decode(SeenPushResult.self).added == 1)
        let seen: SeenPage = try server.request("GET", "/v1/seen", token: shopper.deviceToken).decode()
        #expect(seen.items.map(\.seenAt) == [server.clock.read()])
    }

    /// A sighting from before the offer existed once showed it shown months early and forged beacon health
    /// (issue 23, item 10): it is taken as seen when the offer was made.
    @Test func aSeenTimeBeforeTheOfferWasMadeIsTakenAsItsMaking() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let made = server.clock.read()
        let offer = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        server.clock.advance(by: 3600)
        let shopper = try server.createAccount()
        let push = SeenPush(items: [SeenItem(offerID: offer.id, seenAt: made.addingTimeInterval(-90 * 86_400))])
        #expect(try server.request("POST", "/v1/seen", token: shopper.deviceToken, json: push).status == 200)
        let seen: SeenPage = try server.request("GET", "/v1/seen", token: shopper.deviceToken).decode()
        #expect(seen.items.map(\.seenAt) == [made])
    }

    @Test func anOfferIsNeverRecordedAsSeenOutsideItsWindow() throws {
        let server = try TestServer()
        let made = server.clock.read()
        let retailer = try server.registerRetailer()
        let later = try server.putOffer(
            retailer, major: 1, minor: 1, OfferDraft(title: "From 2031", startsAt: made.addingTimeInterval(4 * 365 * 86_400)))
        // Made two weeks ago, for the week after.
        let ended = try server.putOffer(
            retailer, major: 1, minor: 2,
            OfferDraft(title: "Last week", startsAt: made.addingTimeInterval(86_400), endsAt: made.addingTimeInterval(7 * 86_400)))
        server.clock.advance(by: 14 * 86_400)
        let now = server.clock.read()
        let shopper = try server.createAccount()
        let outside = [
            SeenItem(offerID: later.id, seenAt: now),
            // A time in the window, but after the server's clock: taken as now, before the window opens.
            SeenItem(offerID: later.id, seenAt: later.startsAt!.addingTimeInterval(60)),
            SeenItem(offerID: ended.id, seenAt: now),
            SeenItem(offerID: ended.id, seenAt: ended.startsAt!.addingTimeInterval(-60)),
        ]
        for item in outside {
            let reply = try server.request("POST", "/v1/seen", token: shopper.deviceToken, json: SeenPush(items: [item]))
            #expect(reply.status == 200, "\(item): \(reply.text)")
            #expect(try reply.decode(SeenPushResult.self).added == 0, "\(item)")
        }
        let stats: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: retailer.apiKey).decode()
        #expect(stats.offers.map(\.seenBy) == [0, 0])
        // Inside the window (in the past) it counts.
        let inside = SeenItem(offerID: ended.id, seenAt: ended.startsAt!.addingTimeInterval(86_400))
        let reply = try server.request("POST", "/v1/seen", token: shopper.deviceToken, json: SeenPush(items: [inside]))
        #expect(try reply.decode(SeenPushResult.self).added == 1)
        let after: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: retailer.apiKey).decode()
        #expect(after.offers.map(\.seenBy) == [0, 1])
    }
}
