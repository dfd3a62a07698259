import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `loyalty retailer till-key create|list|revoke`.
let retailerTillKeyCommand = Command(
    name: "till-key", summary: "Make, list and revoke the keys your tills accept codes with.",
    subcommands: [tillKeyCreate, tillKeyList, tillKeyRevoke])

private let tillKeyName = Option<String>(
    "name", value: "NAME", help: "The till's name: acceptances say it.", required: true)
private let tillKeyID = Positional("ID", expected: "a till key's id (see `loyalty retailer till-key list`)") {
    UUID(uuidString: $0)
}

private let tillKeyCreate = Command(
    name: "create", summary: "A key for one till; it is shown only this once.",
    discussion: clientDiscussion, options: [tillKeyName] + ClientOptions.all,
    run: clientCommand { context in
        let name = context.arguments.required(tillKeyName)
        let key = try context.api.createTillKey(name: name, try context.retailerCredential())
        context.output.emit(text: ClientText.tillKeyCreated(key), json: ClientJSONLines.tillKeyCreated(key))
    })

private let tillKeyList = Command(
    name: "list", summary: "Your till keys, live and revoked (never the keys themselves).",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        let keys = try context.api.tillKeys(try context.retailerCredential()).tillKeys
        context.output.emit(
            text: keys.isEmpty ? "no till keys yet: `loyalty retailer till-key create --name NAME`" : ClientText.tillKeys(keys),
            jsonLines: keys.map(ClientJSONLines.tillKey))
    })

private let tillKeyRevoke = Command(
    name: "revoke", summary: "Revoke till key ID; it stops working at once.",
    discussion: clientDiscussion, options: ClientOptions.all, positionals: [tillKeyID],
    run: clientCommand { context in
        let id = context.arguments.word(tillKeyID)!
        try context.api.revokeTillKey(id, try context.retailerCredential())
        context.output.emit(
            text: "till key \(id.uuidString.lowercased()) revoked",
            json: ClientJSONLines.tillKeyRevoked(id))
    })
