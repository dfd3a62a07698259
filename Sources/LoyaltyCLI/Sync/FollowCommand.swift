import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private let retailerName = Positional("NAME")

/// The directory a name is looked up in: the cached one, or fetched when there is none yet.
private func directoryCache(_ context: ClientContext) throws -> OfferCache {
    let cache = try context.openCache()
    if try cache.directoryRetailers().isEmpty {
        let (_, credential) = try context.deviceCredential()
        if case .directory(let directory, let etag) = try context.api.directory(etag: nil, credential) {
            try cache.store(directory, etag: etag)
        }
    }
    return cache
}

let followCommand = Command(
    name: "follow", summary: "Carry a retailer's offers wherever you are (with a working set, the default).",
    discussion: """
        A device that syncs a working set (`loyalty sync`'s default; not after `loyalty sync --all`) carries the
        offers of the retailers with a store near it, those its scan heard, and those you follow: a followed
        retailer's offers are fetched at the next sync and never leave the cache. NAME is the retailer's name as the
        directory has it (case does not matter).

        \(clientDiscussion)
        """,
    options: ClientOptions.all, positionals: [retailerName],
    run: clientCommand { context in
        let name = context.arguments.word(retailerName)!
        guard let retailer = try directoryCache(context).follow(named: name) else {
            throw ClientError.notFound(.noRetailer(name))
        }
        context.output.emit(
            text: "following \(TerminalText.escaped(retailer.name)): `loyalty sync` fetches its offers",
            json: ClientJSONLines.following("followed", retailer))
    })

let unfollowCommand = Command(
    name: "unfollow", summary: "Stop carrying a followed retailer's offers wherever you are.",
    discussion: """
        Its offers stay while its stores are near or its beacons are heard, and leave the cache a week after the
        last time they were (but for an offer that waits to be shown or redeemed).

        \(clientDiscussion)
        """,
    options: ClientOptions.all, positionals: [retailerName],
    run: clientCommand { context in
        let name = context.arguments.word(retailerName)!
        guard try context.openCache().unfollow(named: name) else {
            throw ClientError.notFound(.noRetailer(name))
        }
        context.output.emit(
            text: "no longer following \(TerminalText.escaped(name))",
            json: ClientJSONLines.object([("event", .string("unfollowed")), ("retailer", .string(name))]))
    })

let followingCommand = Command(
    name: "following", summary: "List the retailers you follow.",
    discussion: clientDiscussion,
    options: ClientOptions.all,
    run: clientCommand { context in
        let followed = try context.openCache().followed()
        let output = context.output
        if output.isJSON {
            for retailer in followed { output.line(ClientJSONLines.following("following", retailer)) }
            return
        }
        if followed.isEmpty { return output.line("following no retailer: `loyalty follow NAME` adds one") }
        for retailer in followed { output.line(TerminalText.escaped(retailer.name)) }
    })

extension ClientJSONLines {
    /// `follow` and `following`.
    static func following(_ event: String, _ retailer: DirectoryRetailer) -> String {
        object([
            ("event", .string(event)), ("retailer", .string(retailer.name)),
            ("retailer_id", .string(retailer.id.uuidString.lowercased())),
            ("uuid", .string(retailer.uuid.uuidString)),
        ])
    }
}
