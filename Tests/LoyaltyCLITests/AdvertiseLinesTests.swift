import Beacons
import Foundation
import LoyaltyCLI
import LoyaltyClient
import Testing

/// What `beacon advertise` prints as it starts and stops, as text and as JSON lines.
@Suite struct AdvertiseLinesTests {
    let frame = BeaconFrame(
        kind: .iBeacon,
        identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2),
        measuredPower: -59)

    @Test func advertisingText() {
        #expect(
            ClientText.advertising(frame, intervalMilliseconds: 100, adapter: "hci0", mode: "legacy", duration: 2.5)
                == "advertising \(frame.identity) at -59 dBm every 100.0 ms on hci0 (legacy commands) for 2.5 s")
        #expect(
            ClientText.advertising(frame, intervalMilliseconds: 152.5, adapter: "hci1", mode: "extended", duration: nil)
                == "advertising \(frame.identity) at -59 dBm every 152.5 ms on hci1 (extended commands) until Ctrl-C")
        #expect(
            ClientText.advertising(frame, intervalMilliseconds: 100, adapter: "hci0", mode: nil, duration: nil)
                == "advertising \(frame.identity) at -59 dBm every 100.0 ms on hci0 (through bluetoothd) until Ctrl-C")
    }

    @Test func advertisingJSONLines() {
        #expect(
            ClientJSONLines.advertising(frame, intervalMilliseconds: 100, adapter: "hci0", mode: "legacy", via: "hci")
                == #"{"event":"advertising","adapter":"hci0","uuid":"8F0C1DDC-11E5-4A07-8910-425941B072F9","#
                + #""major":1,"minor":2,"measured_power":-59,"interval_ms":100.0,"commands":"legacy","via":"hci"}"#)
        #expect(
            ClientJSONLines.advertising(frame, intervalMilliseconds: 100, adapter: "hci0", mode: nil, via: "bluetoothd")
                .hasSuffix(#""interval_ms":100.0,"commands":null,"via":"bluetoothd"}"#))
        #expect(ClientJSONLines.advertisingStopped(adapter: "hci0") == #"{"event":"stopped","adapter":"hci0"}"#)
        #expect(
            ClientJSONLines.hciCommand(name: "LE Set Advertising Enable", opcode: "0x200A", packet: "0A200101")
                == #"{"command":"LE Set Advertising Enable","opcode":"0x200A","packet":"0A200101"}"#)
        #expect(
            ClientJSONLines.advertisingWritten("beacon.btsnoop", commands: 4)
                == #"{"file":"beacon.btsnoop","commands":4,"advertising_reports":1}"#)
        #expect(
            ClientText.advertisingWritten("beacon.btsnoop", commands: 4)
                == "wrote beacon.btsnoop: 4 HCI commands and the advertising report a scanner 1 m away receives")
    }
}
