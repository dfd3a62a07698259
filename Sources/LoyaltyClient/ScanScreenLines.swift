/// The lines a scan on a terminal shows about the offer on screen and the store the shopper is at.
extension ClientText {
    /// Under the live table while `offer` is on screen, with the keys that answer it.
    public static func offerNotice(_ offer: ResolvedOffer) -> String {
        "OFFER from \(TerminalText.escaped(offer.retailer.name)): \(TerminalText.escaped(offer.offer.title))"
            + "    [d] dismiss  [r] redeem"
    }

    /// The shopper entered (`entered`) or left the store: its name and its retailer's.
    public static func storeEvent(entered: Bool, _ resolved: ResolvedStore) -> String {
        let verb = entered ? "entered" : "left"
        return TerminalText.escaped("\(verb) \(resolved.store.name) (\(resolved.retailer.name))")
    }
}
