import Foundation
import LoyaltyAPI
import LoyaltyClient
import Testing

@testable import LoyaltyCLI

/// What a notification says of retailer text that came over the network (a server refuses control characters
/// in new text, but a cache may hold older rows): never markup in the summary, markup escaped in the body
/// only where the server reads it, control characters shown as codes everywhere.
@Suite struct DesktopNotificationTests {
    let retailer = CatalogRetailer(id: UUID(), name: "Tom & Jerry's", uuid: UUID())

    func offer(title: String, description: String) -> ResolvedOffer {
        ResolvedOffer(
            offer: Offer(
                id: UUID(), retailerID: retailer.id, major: 1, minor: 1, title: title, description: description,
                updatedAt: Date(timeIntervalSince1970: 0)),
            retailer: retailer)
    }

    @Test func escapeCharactersAreShownAsCodesAndMarkupOnlyEscapedInAMarkupBody() {
        let shown = offer(title: "<b>Half</b> \u{1B}[2J price", description: "<i>a</i> & \"b\" 'c'\u{1B}]0;x\u{7}")
        let plain = DesktopNotification.offer(shown, capabilities: ["body"])
        #expect(plain.summary == "Tom & Jerry's: <b>Half</b> \\u001B[2J price")
        #expect(plain.body == "<i>a</i> & \"b\" 'c'\\u001B]0;x\\u0007")
        #expect(plain.actions.isEmpty)
        let marked = DesktopNotification.offer(shown, capabilities: ["body", "body-markup", "actions"])
        #expect(marked.summary == plain.summary)
        #expect(marked.body == "&lt;i&gt;a&lt;/i&gt; &amp; &quot;b&quot; &apos;c&apos;\\u001B]0;x\\u0007")
        #expect(marked.actions.map(\.key) == ["default", "redeem", "dismiss"])
    }

    @Test func notifyOnTakesAnyOfItsThreeWordsAndNothingElse() {
        #expect(NotificationEvents(parsing: "exit,offers") == [.exit, .offers])
        #expect(NotificationEvents(parsing: "enter") == [.enter])
        for refused in ["", "offers,", "enter,leave", "OFFERS"] { #expect(NotificationEvents(parsing: refused) == nil) }
    }
}
