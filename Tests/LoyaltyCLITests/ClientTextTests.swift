import Foundation
import Geofencing
import LoyaltyAPI
import Testing

@testable import Beacons
@testable import LoyaltyCLI
import LoyaltyClient

/// What the client commands print on a terminal and the retailer's and till's `--json` lines, byte for byte.
@Suite struct ClientTextTests {
    let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let id = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!

    @Test func tableColumnsLineUpWithoutTrailingSpaces() {
        #expect(ClientText.table(["A", "LONG"], [["wide cell", ""], ["x", "y"]]) == "A          LONG\nwide cell\nx          y\n")
        #expect(timestamp(nil) == "-")
        #expect(timestamp(epoch) == "2027-01-15T08:00:00Z")
    }

    @Test func tillAnswersAndTheirRefusal() {
        let valid = TillCode(
            code: "ABCD-EFGH", status: .valid, offerID: id, major: 1, minor: 2, title: "sushi", redeemedAt: epoch)
        let offer = "\"sushi\" (1:2), redeemed 2027-01-15T08:00:00Z"
        #expect(ClientText.till(valid, accepted: false) == ("ABCD-EFGH is valid: " + offer, false))
        #expect(ClientText.till(valid, accepted: true) == ("accepted ABCD-EFGH: " + offer, false))
        var used = valid
        used.status = .accepted
        used.acceptedAt = epoch
        used.acceptedTill = "till 1"
        #expect(
            ClientText.till(used, accepted: false)
                == ("ABCD-EFGH was used at 2027-01-15T08:00:00Z at the till \"till 1\": " + offer, true))
        #expect(
            ClientJSONLines.tillCode(used, accepted: true)
                == #"{"event":"code_accepted","code":"ABCD-EFGH","status":"accepted","offer_id":"00000000-0000-0000-0000-00000000000a","major":1,"minor":2,"title":"sushi","redeemed_at":"2027-01-15T08:00:00Z","accepted_at":"2027-01-15T08:00:00Z","accepted_till":"till 1"}"#
        )
        #expect(ClientJSONLines.tillCode(valid, accepted: false).hasSuffix(#""accepted_at":null,"accepted_till":null}"#))
    }

    @Test func statsFiguresAndQuietBeacons() {
        let day = DayFigures(date: "2027-01-15", shown: 4, uniqueShoppers: 3, redeemed: 2, accepted: 1)
        let idle = DayFigures(date: "2027-01-16", shown: 0, uniqueShoppers: 0, redeemed: 0, accepted: 0)
        #expect(
            ClientJSONLines.day(day)
                == #"{"event":"day","date":"2027-01-15","shown":4,"unique_shoppers":3,"redeemed":2,"accepted":1,"conversion":0.25}"#
        )
        #expect(ClientJSONLines.day(idle).hasSuffix(#""conversion":null}"#))
        #expect(
            ClientText.figures(RetailerFigures(days: 2, total: [day, idle], offers: []))
                == """

                all offers, the last 2 days (UTC):
                DAY         SHOWN  SHOPPERS  REDEEMED  ACCEPTED  CONVERSION
                2027-01-15  4      3         2         1         25%
                2027-01-16  0      0         0         0         -

                """)
        let quiet = BeaconHealth(offerID: id, major: 1, minor: 2, title: "sushi", lastHeardAt: nil, checkBattery: true)
        let heard = BeaconHealth(offerID: id, major: 1, minor: 3, title: "tea", lastHeardAt: epoch, checkBattery: false)
        #expect(
            ClientJSONLines.beacon(heard)
                == #"{"event":"beacon","major":1,"minor":3,"last_heard_at":"2027-01-15T08:00:00Z","check_battery":false}"#)
        #expect(
            ClientText.beaconHealth(BeaconHealthList(quietDays: 7, beacons: [quiet, heard]))
                == "\n1 of 2 beacons unheard for 7 days\nBEACON  TITLE  LAST HEARD  CHECK\n1:2     sushi  -           check its battery\n"
        )
        #expect(
            ClientText.beaconHealth(BeaconHealthList(quietDays: 7, beacons: [heard]))
                == "\n0 of 1 beacons unheard for 7 days\n")
    }

    @Test func tillKeysAndImports() {
        let key = TillKey(id: id, name: "till 1", createdAt: epoch)
        #expect(
            ClientJSONLines.tillKey(key)
                == #"{"id":"00000000-0000-0000-0000-00000000000a","name":"till 1","created_at":"2027-01-15T08:00:00Z","revoked_at":null}"#
        )
        #expect(
            ClientText.tillKeys([key])
                == "ID                                    NAME    CREATED               REVOKED\n"
                + "00000000-0000-0000-0000-00000000000a  till 1  2027-01-15T08:00:00Z  -\n")
        #expect(
            ClientJSONLines.tillKeyCreated(TillKeyCredentials(id: id, name: "till 1", createdAt: epoch, tillKey: "lt_x"))
                == #"{"event":"till_key_created","id":"00000000-0000-0000-0000-00000000000a","name":"till 1","till_key":"lt_x"}"#
        )
        #expect(
            ClientJSONLines.offersImported(OfferImportResult(created: 1, updated: 2, unchanged: 3))
                == #"{"event":"offers_imported","created":1,"updated":2,"unchanged":3}"#)
    }

    @Test func scanLinesSayWhatHappened() {
        let region = BeaconIdentityConstraint(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1)
        #expect(
            ClientText.regionEvent(RegionEvent(kind: .exit, region: region, time: 1), retailer: "Matey's\u{1B}[2J")
                == #"left Matey's\u001B[2J 1:*"#)
        #expect(
            ClientText.regionEvent(RegionEvent(kind: .enter, region: region, time: 1), retailer: nil)
                == "entered 8F0C1DDC… 1:* (not in the catalog)")
        #expect(
            ClientText.offerSummary(shown: 3, redeemed: 1, dismissed: 1, waiting: 2)
                == "offers: 3 shown, 1 redeemed, 1 dismissed, 2 left waiting")
        #expect(ClientText.heldSummary(0, byReason: [:]) == "held back: none")
        #expect(
            ClientText.heldSummary(2, byReason: [.dailyCap: 1, .muted: 1, .quietHours: 1])
                == "held back: 2 (muted 1, quiet hours 1, daily cap 1)")
        var statistics = CaptureStatistics()
        (statistics.records, statistics.advertisingReports, statistics.beaconFrames) = (9, 7, 5)
        (statistics.malformedEvents, statistics.malformedAdvertisingData) = (1, 2)
        #expect(
            ClientText.summary(statistics, live: true)
                == "heard 9 events: 7 advertising reports, 5 beacon frames, 3 malformed events skipped")
        #expect(ClientText.summary(statistics, live: false).hasPrefix("replayed 9 records: "))
        #expect(
            ClientText.syncFailed(.network("down"), syncing: .area)
                == "warning: \(ClientError.network("down").description); stores come from the cache")
        #expect(ClientText.progress(.pushingSeen(sent: 3)) == "sending seen offers: 3")
    }

    @Test func aMalformedDecodeArgumentIsNamedAndEscaped() {
        let failure = BeaconJSONLines.decodeFailure("0201061aff4c000215\"8f0c1ddc11e5", argument: 3, of: 4, "not hex")
        #expect(failure.error == #"error: argument 3 of 4 ("0201061aff4c000215\"8f0c1..."): not hex"#)
        #expect(failure.line == #"{"kind":"error","argument":3,"input":"0201061aff4c000215\"8f0c1...","error":"not hex"}"#)
        #expect(BeaconJSONLines.decodeFailure("zz", argument: 1, of: 1, "not hex").error == #"error: argument 1 of 1 ("zz"): not hex"#)
    }

    @Test func cachedOffersSayTheirWindowAndTablesEscapeServerText() {
        let retailer = CatalogRetailer(id: id, name: "Matey's\u{1B}[2J", uuid: id)
        let later = Offer(
            id: id, retailerID: id, major: 1, minor: 2, title: "later", startsAt: epoch.addingTimeInterval(60),
            updatedAt: epoch)
        var ended = later
        (ended.title, ended.startsAt, ended.endsAt) = ("ended", nil, epoch)
        var open = ended
        (open.title, open.endsAt) = ("open", nil)
        let text = ClientText.cachedOffers(
            [later, ended, open].map { ResolvedOffer(offer: $0, retailer: retailer) }, seen: [id: epoch], now: epoch)
        let rows = text.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.map { $0[0] } == ["RETAILER", "Matey's\\u001B[2J", "Matey's\\u001B[2J", "Matey's\\u001B[2J"])
        #expect(rows.dropFirst().map { $0[3...4].joined(separator: " ") } == ["starts 2027-01-15T08:01:00Z", "ended 2027-01-15T08:00:00Z", "- yes"])
    }
}
