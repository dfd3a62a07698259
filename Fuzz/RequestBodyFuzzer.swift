// libFuzzer target: the server's request-body path (JSON parse, unknown-key check, Codable decoding, validation)
// for every body type a handler reads. The first byte picks the type, the rest is the body. It must answer a
// value or an APIFailure of 400 or 422, never crash; a value it accepts, written back as the client would send
// it, must be accepted again and read the same.
import Foundation
import HTTPServer
import JSONCoding
import LoyaltyAPI

@testable import LoyaltyServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestBody(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: start + 1, count: count - 1))
    switch start[0] % 6 {
    case 0: check(RetailerRegistration.self, body)
    case 1: check(OfferDraft.self, body)
    case 2: check(DeviceRegistration.self, body)
    case 3: check(DeviceRegistration.self, body, emptyIsObject: true)
    case 4: check(SeenPush.self, body)
    default: check(RedemptionRequest.self, body)
    }
    return 0
}

private func check<T: RequestBody>(_ type: T.Type, _ body: [UInt8], emptyIsObject: Bool = false) {
    let request = HTTPRequest(method: "POST", path: "/fuzz", body: body)
    let value: T
    do {
        value = try request.decodeBody(T.self, emptyIsObject: emptyIsObject)
    } catch {
        precondition(error.status == 400 || error.status == 422, "status \(error.status) for a bad body")
        return
    }
    let encoded = encode(value)
    let resent = HTTPRequest(method: "POST", path: "/fuzz", body: encoded)
    do {
        let again = try resent.decodeBody(T.self)
        precondition(encode(again) == encoded, "an accepted \(T.self) reads back differently")
    } catch {
        preconditionFailure("an accepted \(T.self) is refused when sent back: \(error.body.error.message)")
    }
}

private func encode<T: Encodable>(_ value: T) -> [UInt8] {
    do {
        return Array(try LoyaltyJSON.encoder().encode(value))
    } catch {
        preconditionFailure("an accepted \(T.self) cannot be encoded: \(error)")
    }
}
