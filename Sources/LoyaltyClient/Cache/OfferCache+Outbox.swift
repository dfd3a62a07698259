import Foundation
import LoyaltyAPI
import SQLite

// The account's seen set and the outbox of seen items the server has not acknowledged yet.

extension OfferCache {
    // MARK: seen set and outbox

    /// The latest known seen time of each offer the account has seen.
    public func seen() throws(ClientError) -> [UUID: Date] {
        try read { db in
            var seen: [UUID: Date] = [:]
            for row in try db.query("SELECT offer_id, seen_at FROM seen") {
                seen[try row.uuid(0)] = Date(timeIntervalSince1970: try row.real(1))
            }
            return seen
        }
    }

    /// The account's shows of each offer with `shows_per_day` on the UTC days it was last shown (this device's and
    /// the synced counts, the larger).
    public func dayShows() throws(ClientError) -> [DayShows] {
        try read { db in
            try db.query("SELECT offer_id, day, shows FROM day_shows ORDER BY day").map { row in
                DayShows(offerID: try row.uuid(0), day: try row.integer(1), shows: Int(try row.integer(2)))
            }
        }
    }

    /// Claims an offer for showing at `shownAt` (the scan's server time), as one transaction: false when the
    /// seen set (written by any process on this device, or synced) has it and `reshowAfter` seconds have not
    /// passed since, or, for an offer with `showsPerDay`, when the account was shown it that many times on
    /// `shownAt`'s UTC day (then `reshowAfter`, if given, spaces the shows); otherwise records `shownAt` in the
    /// seen set (and the day's count) and `reportedAt` in the outbox, and returns true. So scans running at once
    /// on one device never show an offer more often than it may. The two times differ for a replay, whose
    /// timeline runs ahead of the clock: the server is told the real moment.
    ///
    /// The claim stands, in `showing`, until `shown` says the offer went in front of the shopper. An offer
    /// claimed by a process that is gone and never shown (killed between its claim and its line) is claimed
    /// anew by the next, without a second seen item: a kill loses no offer.
    public func claimShown(
        _ offerID: UUID, shownAt: Date, reportedAt: Date, reshowAfter: Int?, showsPerDay: Int? = nil,
        claimant: ProcessIdentity = .current
    ) throws(ClientError) -> Bool {
        try write { db in
            let id = SQLiteValue.text(offerID.uuidString)
            if let row = try db.query("SELECT claimant FROM showing WHERE offer_id = ?", [id]).first {
                let holder = ProcessIdentity(text: row[0].text ?? "")
                guard holder != claimant, !holder.isRunning else { return false }
                try db.run("UPDATE showing SET claimant = ? WHERE offer_id = ?", [.text(claimant.text), id])
                return true
            }
            let day = SQLiteValue.integer(Offer.showDay(shownAt))
            if let row = try db.query("SELECT seen_at FROM seen WHERE offer_id = ?", [id]).first {
                let seenAt = Date(timeIntervalSince1970: try row.real(0))
                if let showsPerDay {
                    let shows = try db.query("SELECT shows FROM day_shows WHERE offer_id = ? AND day = ?", [id, day])
                        .first?.integer(0) ?? 0
                    guard shows < showsPerDay else { return false }
                    if let reshowAfter, shownAt.timeIntervalSince(seenAt) < Double(reshowAfter) { return false }
                } else {
                    guard let reshowAfter, shownAt.timeIntervalSince(seenAt) >= Double(reshowAfter) else { return false }
                }
            }
            try Self.mergeSeen(db, SeenItem(offerID: offerID, seenAt: shownAt))
            if showsPerDay != nil {
                try db.run(
                    """
                    INSERT INTO day_shows (offer_id, day, shows) VALUES (?, ?, 1)
                    ON CONFLICT (offer_id, day) DO UPDATE SET shows = shows + 1
                    """, [id, day])
            }
            try db.run(
                "INSERT INTO outbox (offer_id, seen_at) VALUES (?, ?)", [id, .real(reportedAt.timeIntervalSince1970)])
            try db.run("INSERT INTO showing (offer_id, claimant) VALUES (?, ?)", [id, .text(claimant.text)])
            return true
        }
    }

    /// The offer claimed by `claimShown` is in front of the shopper: its claim is settled.
    public func shown(_ offerID: UUID) throws(ClientError) {
        try write { db in try db.run("DELETE FROM showing WHERE offer_id = ?", [.text(offerID.uuidString)]) }
    }

    /// The offers claimed by processes that are gone and never shown: recorded as seen, they are still to show.
    public func unshown() throws(ClientError) -> Set<UUID> {
        try read { db in
            var offers: Set<UUID> = []
            for row in try db.query("SELECT offer_id, claimant FROM showing")
            where !ProcessIdentity(text: row[1].text ?? "").isRunning {
                offers.insert(try row.uuid(0))
            }
            return offers
        }
    }

    private static func mergeSeen(_ db: SQLiteDatabase, _ item: SeenItem) throws {
        try db.run(
            """
            INSERT INTO seen (offer_id, seen_at) VALUES (?, ?)
            ON CONFLICT (offer_id) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)
            """,
            [.text(item.offerID.uuidString), .real(item.seenAt.timeIntervalSince1970)])
    }

    /// The oldest unsent seen items, with the outbox position to acknowledge them by.
    public func outbox(limit: Int) throws(ClientError) -> (items: [SeenItem], through: Int64) {
        try read { db in
            var items: [SeenItem] = []
            var through: Int64 = 0
            for row in try db.query(
                "SELECT id, offer_id, seen_at FROM outbox ORDER BY id LIMIT ?", [.integer(Int64(limit))])
            {
                through = try row.integer(0)
                items.append(
                    SeenItem(offerID: try row.uuid(1), seenAt: Date(timeIntervalSince1970: try row.real(2))))
            }
            return (items, through)
        }
    }

    public var outboxCount: Int {
        get throws(ClientError) {
            try read { db in Int(try db.query("SELECT count(*) FROM outbox").first?.integer(0) ?? 0) }
        }
    }

    /// The server acknowledged every outbox item up to `id`.
    public func acknowledgeOutbox(through id: Int64) throws(ClientError) {
        try write { db in try db.run("DELETE FROM outbox WHERE id <= ?", [.integer(id)]) }
    }

    /// Merges a page of the account's seen set and its day counts (the larger of each, older days dropped) and
    /// moves the seen cursor, in one transaction.
    public func apply(_ page: SeenPage) throws(ClientError) {
        try write { db in
            for item in page.items { try Self.mergeSeen(db, item) }
            for shows in page.dayShows ?? [] {
                try db.run(
                    """
                    INSERT INTO day_shows (offer_id, day, shows) VALUES (?, ?, ?)
                    ON CONFLICT (offer_id, day) DO UPDATE SET shows = max(shows, excluded.shows)
                    """, [.text(shows.offerID.uuidString), .integer(shows.day), .integer(Int64(shows.shows))])
            }
            if let latest = page.dayShows?.map(\.day).max() {
                try db.run("DELETE FROM day_shows WHERE day < ?", [.integer(latest - 1)])
            }
            try Self.setState(db, .seenCursor, page.cursor)
        }
    }
}
