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

    /// nil when `text` was not made by `encoded()`.
    init?(_ text: String) {
        guard text.count <= 200, let bytes = Secrets.decodeBase64URL(text),
            let plain = String(bytes: bytes, encoding: .utf8)
        else { return nil }
        let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 || (parts.count == 5 && parts[0] == "n1"), ["v1", "n1", "p1"].contains(parts[0]),
            let generation = try? UUID(postgresText: String(parts[1])),
            let version = Int64(parts[2]), version >= 0
        else { return nil }
        var position: NearPosition?
        if parts.count == 5 {
            guard let after = try? UUID(postgresText: String(parts[4])) else { return nil }
            switch parts[3] {
            case "s": position = .stores(after: after)
            case "o": position = .offers(after: after)
            default: return nil
            }
        }
        self.init(generation: generation, version: version, near: parts[0] == "n1", nearPosition: position)
        self.part = parts[0] == "p1"
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

/// Where the next page of an area starts: its stores in id order, then its offers in id order (the nil UUID:
/// the first offer).
enum NearPosition: Equatable {
    case stores(after: UUID)
    case offers(after: UUID)
}
