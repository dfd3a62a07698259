// libFuzzer target: advertising data (AD structures) through the beacon frame parser. Bad input must throw
// MalformedPacket with an offset inside the data; every frame found must encode back to the bytes it came from.
import Beacons

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdvertisingData(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Array(UnsafeBufferPointer(start: start, count: count))
    var structures = 0
    do {
        _ = try AdvertisingData.beaconFrames(in: data)
        try data.withUnsafeBytes { bytes in
            var iterator = AdvertisingDataIterator(bytes)
            while let structure = try iterator.next() {
                structures += 1
                precondition(structure.value.count < 255, "an AD value longer than its length byte allows")
            }
        }
    } catch let error as MalformedPacket {
        precondition(error.offset < data.count, "error offset \(error.offset) past \(data.count) bytes of data")
    } catch {
        preconditionFailure("not a MalformedPacket: \(error)")
    }
    precondition(structures <= data.count / 2 + 1, "more AD structures than the bytes can hold")
    return 0
}
