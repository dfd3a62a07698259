import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `loyalty mute RETAILER` and `loyalty unmute RETAILER`: the account's muted retailers, kept by the server so that
/// every device of the account obeys them (each fetches them at sync).
private enum MuteWords {
    static let retailer = Positional("RETAILER")
}

private let muteDiscussion = """
    RETAILER is the retailer's name as the catalog or the directory gives it (any case; `loyalty offers` lists
    them) or its id
    (`loyalty offers --json`). The server keeps the account's muted retailers: every device of the account
    obeys them from its next sync (a scan syncs as it starts), and `loyalty config show` lists them. A scan
    holds back a muted retailer's offers, counted in its summary as muted; they are not recorded as seen, so
    they show again once the retailer is unmuted.

    \(clientDiscussion)
    """

let muteCommand = Command(
    name: "mute", summary: "Show no offers of a retailer, on every device of this account.",
    discussion: muteDiscussion, options: ClientOptions.all, positionals: [MuteWords.retailer],
    run: clientCommand { context in try setMuted(true, context) })

let unmuteCommand = Command(
    name: "unmute", summary: "Show a muted retailer's offers again, on every device of this account.",
    discussion: muteDiscussion, options: ClientOptions.all, positionals: [MuteWords.retailer],
    run: clientCommand { context in try setMuted(false, context) })

private func setMuted(_ muted: Bool, _ context: ClientContext) throws {
    let given = (context.arguments.word(MuteWords.retailer) ?? "").trimmingCharacters(in: .whitespaces)
    let cache = try context.openCache()
    let credential = try context.deviceCredential().1
    // A working set's directory names the retailers it does not carry too.
    let known = try cache.retailers().map { MutedRetailer(id: $0.id, name: $0.name) }
        + (try cache.preferences?.mutedRetailers ?? [])
        + (try cache.directoryRetailers().map { MutedRetailer(id: $0.id, name: $0.name) })
    let retailer: MutedRetailer
    if let id = UUID(uuidString: given) {
        retailer = known.first { $0.id == id } ?? MutedRetailer(id: id, name: given)
    } else if let named = known.first(where: { $0.name.lowercased() == given.lowercased() }) {
        retailer = named
    } else {
        throw context.arguments.usageError(
            "no retailer named '\(TerminalText.escaped(given))' in this device's catalog: run `loyalty sync`, or give the retailer's id (`loyalty offers --json` shows it)"
        )
    }
    let preferences = try context.api.setMuted(muted, retailerID: retailer.id, credential)
    try cache.setPreferences(preferences)
    let name = preferences.mutedRetailers.first { $0.id == retailer.id }?.name ?? retailer.name
    context.output.emit(
        text: ClientText.muted(muted, name), json: ClientJSONLines.muted(muted, MutedRetailer(id: retailer.id, name: name)))
}
