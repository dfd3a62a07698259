import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// Error messages read as one sentence each.
@Suite struct MessageTests {
    @Test func coordinateMessagesNameTheFieldOnce() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        func put(_ body: String) throws -> TestResponse {
            try server.request("PUT", "/v1/retailer/stores/carnaby", token: retailer.apiKey, rawJSON: body)
        }
        let north = try put(#"{"name":"Carnaby","latitude":95,"longitude":0,"radius_m":80}"#)
        #expect(north.status == 422 && north.errorField == "latitude")
        #expect(try north.decode(APIErrorBody.self).error.message == "latitude must be from -90 to 90 degrees")
        let east = try put(#"{"name":"Carnaby","latitude":0,"longitude":181,"radius_m":80}"#)
        #expect(try east.decode(APIErrorBody.self).error.message == "longitude must be from -180 to 180 degrees")
        let text = try put(#"{"name":"Carnaby","latitude":"north","longitude":0,"radius_m":80}"#)
        #expect(text.errorField == "latitude")
        #expect(try text.decode(APIErrorBody.self).error.message == "latitude must be a number")

        let shopper = try server.createAccount()
        let near = try server.request("GET", "/v1/catalog?near=95,0", token: shopper.deviceToken)
        #expect(near.status == 422 && near.errorField == "near")
        #expect(try near.decode(APIErrorBody.self).error.message == "near needs a latitude from -90 to 90 degrees")
    }
}
