import Foundation
import JSONCoding
import LoyaltyAPI

// The shopper's own data: the export written as one document, and the account deleted (docs/PRIVACY.md).

extension ClientHome {
    /// `loyalty account export`: the service's export of this device's account as one JSON document, written by
    /// `write` a piece at a time (the head, then each page of the seen set and of the verified sightings), so that
    /// memory holds one page whatever the account's size. Returns the head, whose counts say what was written.
    public func exportAccount(
        _ api: LoyaltyAPIClient, _ credential: Credential, write: ([UInt8]) throws(ClientError) -> Void
    ) throws(ClientError) -> AccountExport {
        let head = try api.accountExport(credential)
        let encoder = LoyaltyJSON.encoder()
        // The head's object, left open for the two lists.
        var opening = try Self.encoded(head, encoder)
        guard opening.last == UInt8(ascii: "}") else { throw .protocolViolation("cannot encode the export") }
        opening.removeLast()
        try write(opening)
        try writeList("seen", from: "/v1/account/export/seen", as: ExportedSeen.self, api, credential, encoder, write)
        try writeList(
            "verified_sightings", from: "/v1/account/export/sightings", as: ExportedSighting.self, api, credential,
            encoder, write)
        try write(Array("}\n".utf8))
        return head
    }

    private func writeList<Item: Codable & Sendable & Equatable>(
        _ key: String, from path: String, as item: Item.Type, _ api: LoyaltyAPIClient, _ credential: Credential,
        _ encoder: JSONEncoder, _ write: ([UInt8]) throws(ClientError) -> Void
    ) throws(ClientError) {
        try write(Array(",\"\(key)\":[".utf8))
        var after: String?
        var first = true
        repeat {
            let page: AccountExportPage<Item> = try api.accountExportPage(path, after: after, credential)
            // A page's items in one write.
            var bytes: [UInt8] = []
            for item in page.items {
                if !first { bytes.append(UInt8(ascii: ",")) }
                bytes += try Self.encoded(item, encoder)
                first = false
            }
            try write(bytes)
            after = page.next
        } while after != nil
        try write([UInt8(ascii: "]")])
    }

    private static func encoded(_ value: some Encodable, _ encoder: JSONEncoder) throws(ClientError) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw .protocolViolation("cannot encode the export: \(error)")
        }
    }

    /// `loyalty account delete`: the service deletes the account, then this device forgets it (its token and its
    /// cache). Nothing local is removed unless the service confirmed.
    public func deleteAccount(_ api: LoyaltyAPIClient, _ credential: Credential) throws(ClientError) -> AccountDeletion {
        let deletion = try api.deleteAccount(credential)
        let cache = cacheFile.path
        let files = [deviceFile.path, cache, cache + OfferCache.setAsideSuffix] + OfferCache.journalSuffixes.map { cache + $0 }
        for file in files { try StateFile.remove(URL(fileURLWithPath: file)) }
        return deletion
    }
}

extension LoyaltyAPIClient {
    public func accountExport(_ credential: Credential) throws(ClientError) -> AccountExport {
        try call("GET", "/v1/account/export", credential: credential, maximumResponseBytes: AnswerSize.list)
    }

    func accountExportPage<Item: Codable & Sendable & Equatable>(
        _ path: String, after: String?, _ credential: Credential
    ) throws(ClientError) -> AccountExportPage<Item> {
        try call(
            "GET", path, query: after.map { ["after": $0] } ?? [:], credential: credential,
            maximumResponseBytes: AnswerSize.list)
    }

    public func deleteAccount(_ credential: Credential) throws(ClientError) -> AccountDeletion {
        try call("DELETE", "/v1/account", credential: credential)
    }
}
