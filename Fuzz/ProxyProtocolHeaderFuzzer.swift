// libFuzzer target: the PROXY protocol v2 header a balancer sends before a connection's first byte
// (ProxyProtocolHeader). It must answer a header or a ProxyProtocolError, never crash or read past the bytes; a
// header it accepts ends where the length it announced from the first 16 bytes says, within the bytes given.
import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProxyProtocolHeader(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    guard let header = try? ProxyProtocolHeader(parsing: bytes) else { return 0 }
    let announced = try? ProxyProtocolHeader.length(ofHeaderStartingWith: bytes)
    precondition(header.length == announced, "a header of \(header.length) bytes announced \(String(describing: announced))")
    precondition(header.length >= ProxyProtocolHeader.fixedLength && header.length <= min(count, ProxyProtocolHeader.maxLength))
    return 0
}
