import Foundation
import Postgres

/// Where a client is in a change feed. Opaque to clients: `base64url("<kind>:<generation>:<version>")`.
/// The generation ties a catalog cursor to one database, so a cursor minted elsewhere answers 410.
/// Kind `v1` is the whole feed's; `n1` marks the cursor of a `near` page, whose client holds only an
/// area's part of the catalog and so must never be sent a delta of the whole feed. A near page with more to
/// come adds where the next one starts (`n1:<generation>:<version>:<s|o>:<id>`, see `NearPosition`). Kind `p1` is
/// the cursor of a part (some retailers' rows): a delta of those retailers from it is exact, of the whole feed not.
struct FeedCursor: Equatable {
    var generation: UUID
    var version: Int64
    var near = false
    /// The cursor of a part's page: it may resume a part (the same retailers or others), never the whole feed.
    var part = false
    /// Set only in the cursor of a near page that has more after it.
    var nearPosition: NearPosition?

    init(generation: UUID, version: Int64, near: Bool = false, nearPosition: NearPosition? = nil) {
        self.generation = generation
        self.version = version
        self.near = near
        self.nearPosition = nearPosition
    }

    /// The feed's head, read by `headQuery` (or any row with its `generation` and `version`).
    init(feedRow row: PostgresRow, near: Bool = false) throws {
        self.init(generation: try row.decode("generation"), version: try row.decode("version"), near: near)
    }

    static let headQuery: PostgresQuery = "SELECT generation, version FROM catalog_feed WHERE singleton"

    /// nil when `text` was not made by `encoded()`. Read as bytes: every catalog check reads its `since`, and
    /// splitting it into Characters was a quarter of a 304's instructions. What it accepts is what
    /// `String(bytes:encoding: .utf8)` and a split on ":" accepted: a byte order mark first is dropped as they dropped
    /// it, and every part must be ASCII (so the text is UTF-8, and grapheme and byte boundaries agree).
    init?(_ text: String) {
        guard text.utf8.count <= 200, var bytes = Secrets.decodeBase64URL(text) else { return nil }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard let cursor = bytes.withUnsafeBufferPointer(Self.parsed) else { return nil }
        self = cursor
    }

    private static func parsed(_ plain: UnsafeBufferPointer<UInt8>) -> FeedCursor? {
        let parts = plain.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            .map { UnsafeBufferPointer(rebasing: $0) }
        let kind = parts[0]
        let near = kind.elementsEqual("n1".utf8)
        let part = kind.elementsEqual("p1".utf8)
        guard parts.count == 3 || (parts.count == 5 && near), near || part || kind.elementsEqual("v1".utf8),
            let generation = try? UUID(postgresBytes: parts[1]), let version = nonNegativeInteger(parts[2])
        else { return nil }
        var position: NearPosition?
        if parts.count == 5 {
            guard let after = try? UUID(postgresBytes: parts[4]) else { return nil }
            switch parts[3].count == 1 ? parts[3][0] : 0 {
            case UInt8(ascii: "s"): position = .stores(after: after)
            case UInt8(ascii: "o"): position = .offers(after: after)
            default: return nil
            }
        }
        var cursor = FeedCursor(generation: generation, version: version, near: near, nearPosition: position)
        cursor.part = part
        return cursor
    }

    /// What `Int64(text)` reads, when it is not negative: digits after an optional sign, "-0" being 0.
    private static func nonNegativeInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        let sign = text.first.flatMap { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") ? $0 : nil }
        let digits = UnsafeBufferPointer(rebasing: text.dropFirst(sign == nil ? 0 : 1))
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return sign == UInt8(ascii: "-") && value != 0 ? nil : value
    }

    func encoded() -> String {
        var text = "\(near ? "n1" : part ? "p1" : "v1"):\(generation.postgresText!):\(version)"
        switch nearPosition {
        case .stores(let after): text += ":s:\(after.postgresText!)"
        case .offers(let after): text += ":o:\(after.postgresText!)"
        case nil: break
        }
        return Secrets.base64URL(Array(text.utf8))
    }

    /// The opaque tag (quoted) naming the feed state a page brings the client to; the catalog sends it weak.
    var entityTag: String { "\"\(generation.postgresText!)-\(version)\"" }
}

/// Where a catalog request's client is (its `since`, nil for none) and where the feed is: the catalog routes'
/// credential reads both.
struct CatalogPosition {
    var head: FeedCursor
    var since: FeedCursor?
}

/// Where the next page of an area starts: its stores in id order, then its offers in id order (the nil UUID:
/// the first offer).
enum NearPosition: Equatable {
    case stores(after: UUID)
    case offers(after: UUID)
}
