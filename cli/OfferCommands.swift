import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private let retailerName = Option<String>("retailer", value: "NAME", help: "Only this retailer's offers.")
/// An offer id or the beacon's UUID:MAJOR:MINOR.
private let offerToRedeem = Positional("OFFER")

let offersCommand = Command(
    name: "offers", summary: "List the cached offers (works offline; `loyalty sync` refreshes them).",
    synopsis: "[--retailer NAME]", discussion: clientDiscussion,
    options: [retailerName] + ClientOptions.all,
    run: clientCommand { context in
        let cache = try context.openCache()
        try warnIfCatalogPartial(cache, json: context.json)
        if context.json {
            var out = ""
            try cache.forEachOfferJSON(retailerName: context.arguments.value(retailerName)) { line in
                out += line
                out += "\n"
                if out.utf8.count > 1 << 16 {
                    printOut(out)
                    out = ""
                }
            }
            return out.isEmpty ? () : printOut(out)
        }
        let offers = try cache.offers(retailerName: context.arguments.value(retailerName))
        let seen = try cache.seen()
        if offers.isEmpty {
            return printOut("no offers cached: run `loyalty sync`")
        }
        printTable(
            ["RETAILER", "BEACON", "TITLE", "UNTIL", "SEEN", "ID"],
            offers.map { resolved in
                [
                    resolved.retailer.name, "\(resolved.offer.major):\(resolved.offer.minor)", resolved.offer.title,
                    timestamp(resolved.offer.endsAt), seen[resolved.offer.id] == nil ? "no" : "yes",
                    resolved.offer.id.uuidString.lowercased(),
                ]
            })
    })

let historyCommand = Command(
    name: "history", summary: "The offers this account has seen and this device redeemed (works offline).",
    discussion: clientDiscussion, options: ClientOptions.all,
    run: clientCommand { context in
        let cache = try context.openCache()
        let title = { (id: UUID) throws(ClientError) -> (String, String) in
            let offer = try cache.offer(id: id)
            return (offer?.offer.title ?? "(no longer in the catalog)", offer?.retailer.name ?? "-")
        }
        var rows: [[String]] = []
        for (id, seenAt) in try cache.seen().sorted(by: { $0.value < $1.value }) {
            let (name, retailer) = try title(id)
            if context.json {
                printJSONLine([
                    ("event", .string("seen")), ("offer", .string(id.uuidString.lowercased())),
                    ("retailer", .string(retailer)), ("title", .string(name)), ("at", jsonTimestamp(seenAt)),
                ])
            }
            rows.append([timestamp(seenAt), "seen", retailer, name, ""])
        }
        for record in try cache.redemptions().reversed() {
            let (name, retailer) = try title(record.offerID)
            if context.json {
                printJSONLine([
                    ("event", .string(record.redemption == nil ? "redeem_pending" : "redeemed")),
                    ("offer", .string(record.offerID.uuidString.lowercased())), ("retailer", .string(retailer)),
                    ("title", .string(name)), ("code", jsonOptional(record.redemption?.code)),
                    ("at", jsonTimestamp(record.redemption?.redeemedAt ?? record.requestedAt)),
                ])
            }
            rows.append([
                timestamp(record.redemption?.redeemedAt ?? record.requestedAt),
                record.redemption == nil ? "redeem pending" : "redeemed", retailer, name,
                record.redemption?.code ?? "retry `loyalty redeem \(record.offerID.uuidString.lowercased())`",
            ])
        }
        guard !context.json else { return }
        if rows.isEmpty { return printOut("nothing seen or redeemed yet") }
        printTable(["WHEN", "WHAT", "RETAILER", "OFFER", "CODE"], rows)
    })

let redeemCommand = Command(
    name: "redeem", summary: "Redeem an offer and print the code to show at the till.",
    discussion: """
        OFFER is an offer id (see `loyalty offers`) or the beacon's UUID:MAJOR:MINOR. If the answer is
        lost (network, timeout), run the same command again: it resends the same request, so the offer
        is never redeemed twice.

        \(clientDiscussion)
        """,
    options: ClientOptions.all, positionals: [offerToRedeem],
    run: clientCommand { context in
        let cache = try context.openCache()
        let offer = try OfferReference(parsing: context.arguments.word(offerToRedeem) ?? "").resolve(in: cache)
        let redeemer = Redeemer(
            cache: cache, api: context.api, credential: try context.deviceCredential().1, now: Date.init)
        let redemption: Redemption
        do {
            redemption = try redeemer.redeem(offer)
        } catch ClientError.server(409, .limitReached, _) {
            throw ClientError.server(
                status: 409, code: .limitReached,
                message: "\"\(offer.offer.title)\" cannot be redeemed again: its redemption limit is reached")
        } catch ClientError.network(let message) {
            throw ClientError.network(
                "\(message); run the same `loyalty redeem` again: it resends the same request, so it never redeems twice"
            )
        } catch ClientError.server(410, _, _) {
            throw ClientError.server(
                status: 410, code: .offerUnavailable,
                message:
                    "\"\(offer.offer.title)\" is no longer available (removed or outside its dates): run `loyalty sync`"
            )
        }
        if context.json {
            return printJSONLine([
                ("event", .string("redeemed")), ("offer", .string(offer.offer.id.uuidString.lowercased())),
                ("title", .string(offer.offer.title)), ("code", .string(redemption.code)),
                ("redemption_id", .string(redemption.id.uuidString.lowercased())),
                ("redeemed_at", jsonTimestamp(redemption.redeemedAt)),
            ])
        }
        printOut("redeemed \"\(offer.offer.title)\" at \(offer.retailer.name): show code \(redemption.code)")
    })
