import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Synchronization
import Testing

@testable import LoyaltyServer

/// A shopper with something in every table that holds an account's data: two devices, a link code, two offers
/// seen (one of them shown up to twice a day, so counted in `offer_day_shows`), a verified sighting, a redemption accepted at the till and one not yet used, quiet hours, caps and a
/// muted retailer.
struct DemoShopper {
    let phone: DeviceCredentials
    let tablet: DeviceCredentials
    let retailer: RetailerCredentials
    let sushi: Offer
    let pizza: Offer
    let acceptedCode: String
    let unspentCode: String

    init(_ server: TestServer) throws {
        retailer = try server.registerRetailer()
        sushi = try server.putOffer(
            retailer, major: 1, minor: 1, OfferDraft(title: "30% off sushi at The Japanese Kitchen", totalLimit: 2))
        pizza = try server.putOffer(
            retailer, major: 1, minor: 2, OfferDraft(title: "Buy one get one free at Tucci's Pizza", showsPerDay: 2))
        phone = try server.createAccount(name: "phone")
        tablet = try server.linkDevice(to: phone, name: "tablet")
        #expect(try server.request("POST", "/v1/link-codes", token: phone.deviceToken).status == 201)
        try server.see(phone, sushi.id, pizza.id)
        try #require(
            try server.request(
                "PUT", "/v1/preferences", token: phone.deviceToken,
                json: PreferenceSettings(quietHours: "21:00-08:00", offersPerHour: 4, offersPerDay: 12)
            ).status == 200)
        let rival = try server.registerRetailer("Rival Mart")
        try #require(
            try server.request("PUT", "/v1/preferences/muted-retailers/\(rival.id)", token: tablet.deviceToken).status
                == 200)
        let (accountID, retailerID, now) = (phone.accountID, retailer.id, server.clock.read())
        try server.pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO verified_sightings (account_id, retailer_id, major, minor, window_counter, heard_at)
                VALUES (\(accountID), \(retailerID), 2, 1, 4096, \(now))
                """)
        }
        let till = try server.createTillKey(retailer, name: "Front till").tillKey
        let accepted: Redemption = try server.redeem(phone, sushi.id).decode()
        #expect(try server.till("accept", accepted.code, key: till).status == 200)
        acceptedCode = accepted.code
        unspentCode = try server.redeem(tablet, pizza.id).decode(Redemption.self).code
    }

    /// What names the account or its devices: ids, and the hex of each token's digest (as bytea reads in JSON).
    var traces: [String] {
        [phone.accountID.uuidString, phone.deviceID.uuidString, tablet.deviceID.uuidString]
            + [phone.deviceToken, tablet.deviceToken].map { Secrets.digest(of: $0).map { String(format: "%02x", $0) }.joined() }
    }
}

extension TestServer {
    /// The rows of every table that hold any of `traces` (a table with none is left out).
    func rowsHolding(_ traces: [String]) throws -> [String: String] {
        try pool.withConnection { connection in
            let tables = try connection.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                .map { row throws(PostgresError) in try row.decode("tablename", as: String.self) }
            var found: [String: String] = [:]
            for table in tables {
                // The names come from the catalog; every column is read as text, bytea as its hex.
                let rows = try connection.query(
                    PostgresQuery(
                        unsafeSQL: "SELECT coalesce(json_agg(t), '[]')::text AS rows FROM \"\(table)\" t WHERE t::text ~* $1",
                        parameters: [traces.joined(separator: "|")])
                )[0].decode("rows", as: String.self)
                if rows != "[]" { found[table] = rows }
            }
            return found
        }
    }

    /// The tables that reference an account, a device or a redemption, read from PostgreSQL's catalog: a foreign
    /// key to `accounts`, `devices` or `redemptions`, or a column named for an account, a device or a redemption.
    func accountDataTables() throws -> Set<String> {
        try pool.withConnection { connection in
            Set(
                try connection.query(
                    """
                    SELECT c.conrelid::regclass::text AS name FROM pg_constraint c
                    WHERE c.contype = 'f' AND c.confrelid IN ('accounts'::regclass, 'devices'::regclass,
                        'redemptions'::regclass)
                    UNION SELECT 'accounts'
                    UNION SELECT table_name FROM information_schema.columns
                    WHERE table_schema = 'public'
                        AND column_name ~ '^(account|device|redemption)(_|$)'
                    """
                ).map { row throws(PostgresError) in try row.decode("name", as: String.self) })
        }
    }

    func export(_ device: DeviceCredentials) throws -> (AccountExport, [ExportedSeen], [ExportedSighting]) {
        let head: AccountExport = try request("GET", "/v1/account/export", token: device.deviceToken).decode()
        func all<Item: Codable & Sendable & Equatable>(_ path: String, _ type: Item.Type) throws -> [Item] {
            var items: [Item] = []
            var after: String?
            repeat {
                let target = path + "?limit=1" + (after.map { "&after=\($0)" } ?? "")
                let response = try request("GET", target, token: device.deviceToken)
                try #require(response.status == 200, "\(response.text)")
                let page: AccountExportPage<Item> = try response.decode()
                items += page.items
                after = page.next
            } while after != nil
            return items
        }
        return (head, try all("/v1/account/export/seen", ExportedSeen.self),
            try all("/v1/account/export/sightings", ExportedSighting.self))
    }
}

@Suite struct AccountDataTests {
    /// Every table the catalog says holds an account's data is in the export's list, and the export holds each
    /// one's rows: a table added later without its place in the export fails here.
    @Test func theExportCoversEveryTableThatHoldsAnAccountsData() throws {
        let server = try TestServer()
        let shopper = try DemoShopper(server)
        let tables = try server.accountDataTables()
        #expect(tables == Set(Database.accountDataTables.keys), "tables with an account's data but no place in the export")

        let (head, seen, sightings) = try server.export(shopper.tablet)
        #expect(head.accountID == shopper.phone.accountID)
        #expect(Set(head.devices.compactMap(\.name)) == ["phone", "tablet"], "\(head.devices)")
        #expect(head.devices.filter(\.current).map(\.id) == [shopper.tablet.deviceID])
        #expect(head.linkCodes.count == 2, "the tablet's spent code and the phone's open one")
        #expect(head.redemptions.count == 2)
        let accepted = try #require(head.redemptions.first { $0.code == shopper.acceptedCode })
        #expect(accepted.acceptedTill == "Front till" && accepted.acceptedAt != nil)
        #expect(accepted.offer.title == shopper.sushi.title && accepted.offer.retailer == "Matey's")
        #expect(head.seenCount == 2 && Set(seen.map(\.offer.id)) == [shopper.sushi.id, shopper.pizza.id])
        #expect(head.verifiedSightingCount == 1 && sightings.map(\.major) == [2] && sightings.map(\.minor) == [1])
        #expect(head.preferences.quietHours == "21:00-08:00" && head.preferences.offersPerDay == 12)
        #expect(head.preferences.mutedRetailers.map(\.name) == ["Rival Mart"])
        #expect(head.dayShows.map(\.offerID) == [shopper.pizza.id] && head.dayShows.first?.shows == 1, "\(head.dayShows)")
        // Every id the database holds for the account appears in the export.
        let document = String(decoding: try LoyaltyJSON.encoder().encode(head), as: UTF8.self).lowercased()
        for id in [shopper.phone.accountID, shopper.phone.deviceID, shopper.tablet.deviceID] {
            #expect(document.contains(id.uuidString.lowercased()))
        }
    }

    /// The walk can fail: a table that names an account and is not exported is found.
    @Test func aTableAddedWithoutExportIsFound() throws {
        let server = try TestServer()
        try server.pool.withConnection { connection in
            try connection.execute(
                script: "CREATE TABLE shopper_notes (account_id uuid REFERENCES accounts (id), note text)")
        }
        #expect(try server.accountDataTables().subtracting(Database.accountDataTables.keys) == ["shopper_notes"])
    }

    /// Bad cursors and limits are refused with the field named; another account's data is never reached.
    @Test func badPagesAreRefused() throws {
        let server = try TestServer()
        let shopper = try DemoShopper(server)
        let stranger = try server.createAccount()
        for target in [
            "/v1/account/export/seen?after=nope", "/v1/account/export/seen?limit=0",
            "/v1/account/export/seen?limit=1001", "/v1/account/export/sightings?after=1.2.3",
            "/v1/account/export/sightings?after=\(UUID()).70000.1.1",
        ] {
            let response = try server.request("GET", target, token: stranger.deviceToken)
            #expect(response.status == 422, "\(target): \(response.text)")
        }
        let (head, seen, sightings) = try server.export(stranger)
        #expect(head.redemptions.isEmpty && seen.isEmpty && sightings.isEmpty && head.devices.count == 1)
        #expect(try server.request("GET", "/v1/account/export").status == 401)
        _ = shopper
    }

    /// Deleting leaves no row that names the account, its devices or their tokens; the retailer's figures and
    /// limits do not change; the unspent code is refused at the till, saying why; the token gets a clear 401.
    @Test(arguments: Transport.allCases) func deletingLeavesNothingOfTheAccount(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let shopper = try DemoShopper(server)
        let other = try server.createAccount()
        try server.see(other, shopper.sushi.id)
        let figuresBefore = try server.request("GET", "/v1/retailer/figures?days=7", token: shopper.retailer.apiKey).text
        let statisticsBefore = try server.request("GET", "/v1/retailer/stats", token: shopper.retailer.apiKey).text
        let fleetBefore = try server.request("GET", "/v1/retailer/fleet", token: shopper.retailer.apiKey).text
        #expect(try !server.rowsHolding(shopper.traces).isEmpty)

        let response = try server.request("DELETE", "/v1/account", token: shopper.phone.deviceToken)
        try #require(response.status == 200, "\(response.text)")
        #expect(
            try response.decode(AccountDeletion.self)
                == AccountDeletion(devices: 2, seen: 2, verifiedSightings: 1, linkCodes: 2, redemptionsKeptAnonymously: 2))
        #expect(try server.rowsHolding(shopper.traces) == [:])
        #expect(try server.request("GET", "/v1/retailer/figures?days=7", token: shopper.retailer.apiKey).text == figuresBefore)
        #expect(try server.request("GET", "/v1/retailer/stats", token: shopper.retailer.apiKey).text == statisticsBefore)
        #expect(try server.request("GET", "/v1/retailer/fleet", token: shopper.retailer.apiKey).text == fleetBefore)

        // The total limit of 2 holds: the deleted account's redemption still counts.
        let late = try server.createAccount()
        try server.see(late, shopper.sushi.id)
        _ = try server.redeem(other, shopper.sushi.id)
        let soldOut = try server.redeem(late, shopper.sushi.id)
        #expect(soldOut.status == 409 && soldOut.text.contains("sold out"), "\(soldOut.text)")

        let till = try server.createTillKey(shopper.retailer, name: "Back till").tillKey
        let unspent = try server.till("accept", shopper.unspentCode, key: till)
        #expect(unspent.status == 410 && unspent.errorCode == .codeAccountDeleted, "\(unspent.text)")
        #expect(unspent.text.contains("deleted their account"))
        #expect(try server.till("check", shopper.unspentCode, key: till).errorCode == .codeAccountDeleted)
        #expect(try server.till("accept", shopper.acceptedCode, key: till).errorCode == .codeAlreadyAccepted)

        for device in [shopper.phone, shopper.tablet] {
            for (method, target) in [("DELETE", "/v1/account"), ("GET", "/v1/devices"), ("GET", "/v1/account/export")] {
                let again = try server.request(method, target, token: device.deviceToken)
                #expect(again.status == 401 && again.text.contains("its account was deleted"), "\(again.text)")
            }
        }
    }

    /// A device syncing while another deletes the account: every push is answered (200 before the deletion, 401
    /// after it, never a 500), and nothing of the account is left.
    @Test func deletingWhileAnotherDeviceSyncs() throws {
        let server = try TestServer(poolSize: 4)
        let shopper = try DemoShopper(server)
        let offers = try (3...40).map { minor in
            try server.putOffer(shopper.retailer, major: 1, minor: minor, OfferDraft(title: "Offer \(minor)"))
        }
        let statuses = Mutex<[Int]>([])
        let started = DispatchSemaphore(value: 0)
        let pusher = Thread {
            for (index, offer) in offers.enumerated() {
                let push = SeenPush(items: [SeenItem(offerID: offer.id, seenAt: server.clock.read())])
                let status = (try? server.request("POST", "/v1/seen", token: shopper.tablet.deviceToken, json: push))?.status ?? -1
                statuses.withLock { $0.append(status) }
                if index == 2 { started.signal() }
                if status == 401 { break }
            }
            started.signal()
        }
        pusher.start()
        started.wait()
        let response = try server.request("DELETE", "/v1/account", token: shopper.phone.deviceToken)
        #expect(response.status == 200, "\(response.text)")
        while pusher.isExecuting || !pusher.isFinished { usleep(10_000) }
        let seen = statuses.withLock { $0 }
        #expect(seen.allSatisfy { $0 == 200 || $0 == 401 }, "\(seen)")
        #expect(try server.rowsHolding(shopper.traces) == [:])
    }
}
