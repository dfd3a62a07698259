import Foundation
import Postgres

/// Where a client is in a change feed. Opaque to clients: `base64url("<kind>:<generation>:<version>")`.
/// The generation ties a catalog cursor to one database, so a cursor minted elsewhere answers 410.
/// Kind `v1` is the whole feed's; `n1` marks the cursor of a `near` page, whose client holds only an
/// area's part of the catalog and so must never be sent a delta of the whole feed.
struct FeedCursor: Equatable {
    var generation: UUID
    var version: Int64
    var near = false

    init(generation: UUID, version: Int64, near: Bool = false) {
        self.generation = generation
        self.version = version
        self.near = near
    }

    /// nil when `text` was not made by `encoded()`.
    init?(_ text: String) {
        guard text.count <= 200, let bytes = Secrets.decodeBase64URL(text),
            let plain = String(bytes: bytes, encoding: .utf8)
        else { return nil }
        let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1" || parts[0] == "n1",
            let generation = try? UUID(postgresText: String(parts[1])),
            let version = Int64(parts[2]), version >= 0
        else { return nil }
        self.init(generation: generation, version: version, near: parts[0] == "n1")
    }

    func encoded() -> String {
        Secrets.base64URL(
            Array("\(near ? "n1" : "v1"):\(generation.postgresText!):\(version)".utf8))
    }

    /// The opaque tag (quoted) naming the feed state a page brings the client to; the catalog sends it weak.
    var entityTag: String { "\"\(generation.postgresText!)-\(version)\"" }
}
