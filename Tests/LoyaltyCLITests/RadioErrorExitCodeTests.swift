import BeaconRadio
import Testing

@testable import LoyaltyCLI

/// The radio's errors end `loyalty` with sysexits(3) codes: what the user can fix by permission 77, a stream
/// that is not H4 65, the rest 69.
@Suite struct RadioErrorExitCodeTests {
    @Test func eachKindHasItsCode() {
        #expect(RadioError.missingCapabilities([.netRaw]).exitCode == 77)
        #expect(RadioError.busRefusesUser("Rejected send message").exitCode == 77)
        #expect(RadioError.framingLost("tcp:127.0.0.1:1", indicator: 0x7F).exitCode == 65)
        #expect(RadioError.bluezAdvertising("hci0", "org.bluez.Error.NotPermitted", "Maximum advertisements reached").exitCode == 69)
        #expect(RadioError.bluezAdvertising("hci1", "org.freedesktop.DBus.Error.ServiceUnknown", "").exitCode == 69)
        #expect(RadioError.advertisementReleased("hci0").exitCode == 69)
        #expect(RadioError.noAdapter.exitCode == 69)
    }
}
