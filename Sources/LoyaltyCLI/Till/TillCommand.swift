import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `loyalty till check|accept CODE`: what a cashier runs, with a till key the retailer made.
let tillCommand = Command(
    name: "till", summary: "At the till: check a shopper's redemption code, or accept it (once).",
    discussion: """
        The till key comes from --till-key or LOYALTY_TILL_KEY (`loyalty retailer till-key create` makes one).
        Case, spaces and dashes in CODE do not matter. `accept` succeeds once; a code used before, unknown,
        expired or removed exits 1 saying why (and, for a used one, when and at which till). An accept whose
        answer is lost (network, the server's 503 while its database fails over) is sent again, up to 8 times
        2 s apart, with the same Idempotency-Key: a retry answers as the first accept did.

        \(clientDiscussion)
        """,
    subcommands: [tillCheck, tillAccept])

private enum TillOptions {
    static let key = Option<String>("till-key", value: "KEY", help: "The till key (lt_...); else LOYALTY_TILL_KEY.")
    static let code = Positional("CODE")
}

private let tillCheck = Command(
    name: "check", summary: "What CODE is for and whether it was used; changes nothing.",
    discussion: clientDiscussion, options: [TillOptions.key] + ClientOptions.all, positionals: [TillOptions.code],
    run: clientCommand { context in try runTill(context, accept: false) })

private let tillAccept = Command(
    name: "accept", summary: "Mark CODE used at this till: it succeeds once.",
    discussion: clientDiscussion, options: [TillOptions.key] + ClientOptions.all, positionals: [TillOptions.code],
    run: clientCommand { context in try runTill(context, accept: true) })

/// The server's refusals of a code itself (no such code, used, its offer ended or removed), not of the till.
private let codeRefusals: Set<APIErrorCode> = [
    .codeUnknown, .codeAlreadyAccepted, .codeExpired, .codeOfferRemoved, .codeAccountDeleted,
]

private func runTill(_ context: ClientContext, accept: Bool) throws {
    let arguments = context.arguments
    guard let key = arguments.value(TillOptions.key) ?? context.environment["LOYALTY_TILL_KEY"], !key.isEmpty
    else { throw arguments.usageError("give the till key with --till-key KEY or LOYALTY_TILL_KEY") }
    let typed = arguments.word(TillOptions.code) ?? ""
    let code: String
    do throws(ValidationError) { code = try RedemptionCode.normalized(typed) } catch {
        throw CommandFailure("the code \(error.message)", exitCode: ExitCode.dataError)
    }
    let answer: TillCode
    do {
        answer = try context.api.till(code, accept: accept, .till(key))
    } catch {
        guard case .server(_, let reason?, let message) = error, codeRefusals.contains(reason) else { throw error }
        // The code's own refusal, said as a cashier reads it (not as the server's HTTP error): hand nothing over.
        throw CommandFailure("\(accept ? "not accepted" : "not valid"): \(message)")
    }
    if context.output.isJSON { return context.output.line(ClientJSONLines.tillCode(answer, accepted: accept)) }
    let (line, refused) = ClientText.till(answer, accepted: accept)
    if refused { throw CommandFailure(line) }
    context.output.line(line)
}
