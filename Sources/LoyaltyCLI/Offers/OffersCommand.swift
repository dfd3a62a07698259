import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient
import QRCode

private let retailerName = Option<String>("retailer", value: "NAME", help: "Only this retailer's offers.")
/// An offer id or the beacon's UUID:MAJOR:MINOR: text that names no offer at all is a usage error; a
/// well-formed one missing from the cache is not.
private let offerToRedeem = Positional("OFFER", parse: OfferReference.init(parsing:))

let offersCommand = Command(
    name: "offers", summary: "List the cached offers (works offline; `loyalty sync` refreshes them).",
    discussion: clientDiscussion,
    options: [retailerName] + ClientOptions.all,
    run: clientCommand { context in
        let cache = try context.openCache()
        let output = context.output
        try warnIfCatalogPartial(cache, output)
        let retailer = context.arguments.value(retailerName)
        if output.isJSON { return try cache.forEachOfferJSONChunk(retailerName: retailer) { output.write(bytes: $0) } }
        let offers = try cache.offers(retailerName: retailer)
        let seen = try cache.seen()
        if offers.isEmpty {
            if let retailer, try cache.offerCount > 0 {
                return output.line(
                    "no cached offers of a retailer named '\(TerminalText.escaped(retailer))': `loyalty offers` lists them all")
            }
            if try !cache.directoryRetailers().isEmpty {
                return output.line(
                    "no offers cached: this device's working set carries no retailer yet; `loyalty sync --near LAT,LON`, "
                        + "`loyalty follow NAME` or a scan that hears a shop's beacon brings its offers "
                        + "(`loyalty sync --all`: every retailer's)")
            }
            return output.line("no offers cached: run `loyalty sync`")
        }
        // Server time, as the scan judges windows.
        let now = Date().addingTimeInterval(try cache.serverTimeOffset)
        output.line(ClientText.cachedOffers(offers, seen: seen, now: now))
    })

/// `redeem` and `history` draw the code as a QR code beside the text on a terminal, or with --qr.
private let qrFlag = Flag("qr", help: "Draw the code as a QR code beside the text (the default on a terminal).")

/// The code as a QR code with `text` beside it, when stdout is a terminal or --qr asks; else the text.
private func codeText(_ code: String, beside text: [String], _ context: ClientContext) -> String {
    guard context.output.isTerminal || context.arguments.flag(qrFlag), let symbol = try? QRCode(code) else {
        return text.joined(separator: "\n")
    }
    // The text from the second line of the symbol, past its quiet zone.
    return symbol.terminalLines(beside: [""] + text).joined(separator: "\n")
}

let historyCommand = Command(
    name: "history", summary: "The offers this account has seen and this device redeemed (works offline).",
    discussion: """
        A redemption a till accepted shows as used at the till after the next `loyalty sync`. On a terminal
        (or with --qr) the newest code not yet used is drawn as a QR code for the till to scan.

        \(clientDiscussion)
        """,
    options: [qrFlag] + ClientOptions.all,
    run: clientCommand { context in
        let history = try ShopperHistory(try context.openCache())
        /// The table, and under it the newest code not yet used.
        func text() -> String {
            guard !history.rows.isEmpty else { return "nothing seen or redeemed yet" }
            guard let open = history.open else { return history.table }
            return history.table + "\n" + codeText(open.code, beside: ClientText.openCode(open.code, title: open.title), context)
        }
        context.output.emit(text: text(), jsonLines: history.jsonLines)
    })

let redeemCommand = Command(
    name: "redeem", summary: "Redeem an offer and print the code to show at the till.",
    discussion: """
        OFFER is an offer id (see `loyalty offers`) or the beacon's UUID:MAJOR:MINOR. If the answer is
        lost (network, timeout), run the same command again: it resends the same request, so the offer
        is never redeemed twice.

        \(clientDiscussion)
        """,
    options: [qrFlag] + ClientOptions.all, positionals: [offerToRedeem],
    run: clientCommand { context in
        let cache = try context.openCache()
        let offer = try context.arguments.word(offerToRedeem)!.resolve(in: cache)
        let redeemer = Redeemer(
            cache: cache, api: context.api, credential: try context.deviceCredential().1, now: Date.init)
        let redemption: Redemption
        do throws(ClientError) { redemption = try redeemer.redeem(offer) } catch {
            throw error.explainingRedemption(of: offer)
        }
        context.output.emit(
            text: codeText(redemption.code, beside: ClientText.redeemed(redemption, of: offer), context),
            json: ClientJSONLines.redeemed(redemption, of: offer.offer))
    })
