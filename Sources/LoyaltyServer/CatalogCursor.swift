import Foundation

/// Where a client is in a change feed. Opaque to clients: `base64url("<kind>:<generation>:<version>")`.
/// The generation ties a catalog cursor to one database, so a cursor minted elsewhere answers 410.
struct FeedCursor: Equatable {
    var generation: UUID
    var version: Int64

    init(generation: UUID, version: Int64) {
        self.generation = generation
        self.version = version
    }

    /// nil when `text` was not made by `encoded()`.
    init?(_ text: String) {
        guard text.count <= 200, let bytes = Secrets.decodeBase64URL(text),
            let plain = String(bytes: bytes, encoding: .utf8)
        else { return nil }
        let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let generation = UUID(uuidString: String(parts[1])),
            let version = Int64(parts[2]), version >= 0
        else { return nil }
        self.init(generation: generation, version: version)
    }

    func encoded() -> String {
        Secrets.base64URL(Array("v1:\(generation.uuidString.lowercased()):\(version)".utf8))
    }

    /// A strong ETag naming the feed state a page brings the client to.
    var entityTag: String { "\"\(generation.uuidString.lowercased())-\(version)\"" }
}
