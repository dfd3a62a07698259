// libFuzzer target: a whole BTSnoop file, read through an unlinked temporary file by the same reader a replay
// uses (BTSnoop records, HCI events, advertising reports, AD structures). A damaged file must throw
// BTSnoopError at an offset inside the file once what came before was delivered: never a crash or an over-read.
import Beacons
import Glibc

/// One file for every input: rewritten and read from the start each time. (Glibc's memfd_create needs
/// _GNU_SOURCE, which the Swift importer does not define.)
private let descriptor: CInt = {
    var template = Array("/tmp/btsnoop-fuzz-XXXXXX".utf8CString)
    let descriptor = mkstemp(&template)
    if descriptor >= 0 { unlink(template) }
    return descriptor
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBTSnoop(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    precondition(descriptor >= 0, "cannot create a temporary file")
    precondition(ftruncate(descriptor, 0) == 0)
    var written = 0
    while written < count {
        let result = pwrite(descriptor, start + written, count - written, off_t(written))
        precondition(result > 0, "write to the temporary file failed")
        written += result
    }
    precondition(lseek(descriptor, 0, SEEK_SET) == 0)
    do {
        let capture = AdvertisingCapture(reader: try BTSnoopReader(fileDescriptor: descriptor))
        while let sighting = try capture.nextSighting() {
            precondition(sighting.time.isFinite)
        }
        let statistics = capture.statistics
        precondition(statistics.events <= statistics.records && statistics.advertisingEvents <= statistics.events)
        precondition(statistics.records * 24 + 16 <= count, "more records than the file can hold")
    } catch {
        precondition(error.offset <= count, "error offset \(error.offset) past a \(count)-byte file")
    }
    return 0
}
