import Beacons
import Testing

/// Service data AD structure (type 0x16) of UUID 0xFEAA around `frame`, after a Flags structure: the frame starts
/// at byte 7 of the advertising data.
private func advertisement(_ frame: [UInt8]) -> [UInt8] {
    [2, 0x01, 0x06, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame
}

private let frameOffset = 7
private let namespace: [UInt8] = [0xED, 0xD1, 0xEB, 0xEA, 0xC0, 0x4E, 0x5D, 0xEF, 0xA0, 0x17]
private let instance: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06]
private let uidFrame: [UInt8] = [0x00, 0xEB] + namespace + instance + [0, 0]
private let tlmFrame: [UInt8] = [0x20, 0x00, 0x0B, 0xB8, 0x15, 0x80, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x30, 0x39]
private let encryptedTLMFrame: [UInt8] = [0x20, 0x01] + Array(1...12) + [0xAB, 0xCD, 0x12, 0x34]
private let eidFrame: [UInt8] = [0x30, 0xF0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]

private func decoded(_ frame: [UInt8]) throws(MalformedPacket) -> [AdvertisedFrame] { try AdvertisingData.frames(in: advertisement(frame)) }

private func malformed(_ frame: [UInt8]) -> MalformedPacket? {
    do {
        _ = try decoded(frame)
        return nil
    } catch {
        return error
    }
}

@Suite struct EddystoneFrameTests {
    @Test func uidWithAndWithoutItsReservedBytes() throws {
        let uid = EddystoneUID(namespace: EddystoneNamespace(bytes: namespace)!, instance: instance)
        #expect(try decoded(uidFrame) == [.eddystone(.uid(uid, rangingPower: -21))])
        #expect(try decoded(Array(uidFrame.prefix(18))) == [.eddystone(.uid(uid, rangingPower: -21))])
        #expect(uid.description == "EDD1EBEAC04E5DEFA017:010203040506")
    }

    @Test func urlExpandsSchemeAndCodes() throws {
        let frame: [UInt8] = [0x10, 0xEE, 0x03] + Array("goo".utf8) + [0x07] + Array("/abc".utf8) + [0x00]
        guard case .eddystone(.url(let url, let power)) = try decoded(frame).first else {
            Issue.record("no URL frame")
            return
        }
        #expect(power == -18)
        #expect(url.description == "https://goo.com/abc.com/")
        let www: [UInt8] = [0x10, 0x00, 0x00] + Array("example".utf8) + [0x0D]
        guard case .eddystone(.url(let other, _)) = try decoded(www).first else { return }
        #expect(other.description == "http://www.example.gov")
    }

    @Test func plainTelemetry() throws {
        let expected = TelemetryFrame(batteryMillivolts: 3000, temperatureBits: 0x1580, advertisingCount: 65536, uptimeTenths: 12345)
        #expect(try decoded(tlmFrame) == [.eddystone(.telemetry(expected))])
        #expect(expected.temperature == 21.5)
        #expect(expected.uptimeSeconds == 1234.5)
        #expect(TelemetryFrame(batteryMillivolts: 0, temperatureBits: 0xFF80, advertisingCount: 0, uptimeTenths: 0).temperature == -0.5)
        #expect(TelemetryFrame(batteryMillivolts: 0, temperatureBits: 0x8000, advertisingCount: 0, uptimeTenths: 0).temperature == nil)
    }

    @Test func encryptedTelemetryIsRecognisedNotRead() throws {
        let expected = EncryptedTelemetryFrame(encrypted: Array(1...12), salt: 0xABCD, integrityCheck: 0x1234)
        #expect(try decoded(encryptedTLMFrame) == [.eddystone(.encryptedTelemetry(expected))])
    }

    @Test func ephemeralID() throws {
        #expect(try decoded(eidFrame) == [.eddystone(.eid(EphemeralID(0x1122_3344_5566_7788), rangingPower: -16))])
    }

    /// What the encoder writes, the decoder reads back: one advertisement of each kind.
    @Test func encodedFramesDecodeAsThemselves() throws {
        let frames: [EddystoneFrame] = [
            .uid(EddystoneUID(namespace: EddystoneNamespace(bytes: namespace)!, instance: instance), rangingPower: -30),
            .url(EddystoneURL(scheme: 2, encoded: Array("a.b".utf8) + [4])!, rangingPower: 0),
            .telemetry(TelemetryFrame(batteryMillivolts: 2950, temperatureBits: 0x8000, advertisingCount: 7, uptimeTenths: 9)),
            .encryptedTelemetry(EncryptedTelemetryFrame(encrypted: Array(repeating: 9, count: 12), salt: 0x0102, integrityCheck: 0x0304)),
            .eid(EphemeralID(42), rangingPower: 20),
        ]
        for frame in frames {
            #expect(try AdvertisingData.frames(in: AdvertisingData.eddystone(frame)) == [.eddystone(frame)])
        }
    }

    /// Another service's data, and frame types the spec reserves (0x40) or does not define, are no Eddystone frame.
    @Test func urlsOutsideTheSpecAreRefused() {
        #expect(EddystoneURL(scheme: 4, encoded: [0x61]) == nil)
        #expect(EddystoneURL(scheme: 0, encoded: []) == nil)
        #expect(EddystoneURL(scheme: 0, encoded: Array(repeating: 0x61, count: 18)) == nil)
        #expect(EddystoneURL(scheme: 0, encoded: [0x61, 0x20]) == nil)
    }

    @Test func otherServicesAndUndefinedFrameTypesAreNotFrames() throws {
        #expect(try AdvertisingData.frames(in: [4, 0x16, 0x0F, 0x18, 0x64]).isEmpty)
        #expect(try decoded([0x40, 0x00, 0x01]).isEmpty)
        #expect(try decoded([0xF0] + Array(repeating: 0, count: 9)).isEmpty)
    }

    // Each malformed kind: short, wrong length for the type, reserved bits not zero, a URL byte outside the spec.

    @Test func noFrameTypeIsShort() {
        #expect(malformed([]) == MalformedPacket(.eddystoneFrameShort(frameType: nil, length: 0), offset: frameOffset))
    }

    @Test(arguments: [uidFrame, tlmFrame, encryptedTLMFrame, eidFrame, [0x10, 0x00, 0x02, 0x61]])
    func everyTruncationIsShort(frame: [UInt8]) throws {
        let minimum = frame[0] == 0x00 ? 18 : frame.count
        for cut in 1..<minimum {
            let prefix = Array(frame.prefix(cut))
            #expect(malformed(prefix) == MalformedPacket(.eddystoneFrameShort(frameType: frame[0], length: cut), offset: frameOffset))
        }
        #expect(malformed(frame) == nil)
    }

    @Test(arguments: [uidFrame, tlmFrame, encryptedTLMFrame, eidFrame])
    func aByteTooManyIsTheWrongLength(frame: [UInt8]) {
        #expect(malformed(frame + [0]) == MalformedPacket(.eddystoneFrameLength(frameType: frame[0], length: frame.count + 1), offset: frameOffset))
    }

    @Test func uidOfNineteenBytesIsTheWrongLength() {
        #expect(malformed(Array(uidFrame.prefix(19))) == MalformedPacket(.eddystoneFrameLength(frameType: 0, length: 19), offset: frameOffset))
    }

    @Test func urlOfMoreThanSeventeenEncodedBytesIsTheWrongLength() throws {
        let longest: [UInt8] = [0x10, 0x00, 0x03] + Array(repeating: 0x61, count: 17)
        #expect(malformed(longest) == nil)
        #expect(malformed(longest + [0x61]) == MalformedPacket(.eddystoneFrameLength(frameType: 0x10, length: 21), offset: frameOffset))
    }

    @Test func uidReservedBytesMustBeZero() {
        var frame = uidFrame
        frame[19] = 0x01
        #expect(malformed(frame) == MalformedPacket(.eddystoneReservedNotZero(byte: 0x01), offset: frameOffset + 19))
        frame[18] = 0x80
        #expect(malformed(frame) == MalformedPacket(.eddystoneReservedNotZero(byte: 0x80), offset: frameOffset + 18))
    }

    @Test(arguments: [UInt8(0x01), 0x0F, 0x21, 0x3F])
    func frameTypeLowNibbleMustBeZero(type: UInt8) {
        #expect(malformed([type] + Array(repeating: 0, count: 9)) == MalformedPacket(.eddystoneReservedNotZero(byte: type), offset: frameOffset))
    }

    @Test func urlSchemeBeyondTheFour() {
        #expect(malformed([0x10, 0x00, 0x04, 0x61]) == MalformedPacket(.eddystoneURLScheme(4), offset: frameOffset + 2))
    }

    @Test(arguments: [UInt8(0x0E), 0x20, 0x7F, 0x80, 0xFF])
    func reservedURLBytes(byte: UInt8) {
        #expect(malformed([0x10, 0x00, 0x03, 0x61, byte]) == MalformedPacket(.eddystoneURLByte(byte), offset: frameOffset + 4))
    }

    @Test func unknownTelemetryVersion() {
        #expect(malformed([0x20, 0x02] + Array(repeating: 0, count: 12)) == MalformedPacket(.eddystoneTelemetryVersion(2), offset: frameOffset + 1))
    }

    /// A malformed Eddystone frame does not hide the iBeacon before it from the iterator's caller.
    @Test func framesBeforeTheDamageAreDelivered() throws {
        let beacon = BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: .init(), major: 1, minor: 2), measuredPower: -59)
        let data = AdvertisingData.beacon(beacon) + advertisement([0x30, 0x00]).dropFirst(3)
        var delivered: [AdvertisedFrame] = []
        data.withUnsafeBytes { bytes in
            var structures = AdvertisingDataIterator(bytes)
            #expect(throws: MalformedPacket(.eddystoneFrameShort(frameType: 0x30, length: 2), offset: 34)) {
                while let frame = try structures.nextFrame() { delivered.append(frame) }
            }
        }
        #expect(delivered == [.beacon(beacon)])
    }

    /// Random bytes after the Eddystone service UUID: a frame or a typed error, never a crash or an over-read.
    @Test func randomServiceDataNeverCrashes() {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let frame = (0..<Int.random(in: 0...24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = malformed(frame)
        }
    }
}
