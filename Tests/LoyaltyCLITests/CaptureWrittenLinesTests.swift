import LoyaltyCLI
import LoyaltyClient
import Testing

/// What `beacon simulate` prints once its capture is written, as text and as a JSON line.
@Suite struct CaptureWrittenLinesTests {
    @Test func walkWritten() {
        #expect(ClientText.walkWritten("walk.btsnoop", beacons: 2, seconds: 20) == "wrote walk.btsnoop: 2 beacon(s) over 20.0 s")
        #expect(
            ClientJSONLines.walkWritten("walk.btsnoop", beacons: 2, seconds: 20.5)
                == #"{"file":"walk.btsnoop","beacons":2,"seconds":20.5}"#)
    }
}
