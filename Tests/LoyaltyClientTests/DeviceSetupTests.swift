import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyClient

/// Joining an account and keeping a retailer's key, against a real server.
@Suite(.serialized) struct DeviceSetupTests {
    func home() throws -> ClientHome {
        let directory = try temporaryDirectory()
        return ClientHome(configDirectory: directory, dataDirectory: directory)
    }

    @Test func aDeviceJoinsOneAccountOnly() throws {
        let server = try TestServer(.socket, clock: .machine())
        let phone = try home()
        let created = try phone.createAccount(server.api, deviceName: "phone")
        #expect(try phone.loadDevice() == Issued(created, issuer: server.api.origin))
        #expect {
            _ = try phone.createAccount(server.api, deviceName: "again")
        } throws: { error in
            error as? ClientError == .alreadyInAccount(created.accountID, linking: false)
        }

        let tablet = try home()
        let code = try server.api.createLinkCode(.device(created.deviceToken)).code
        let linked = try tablet.linkDevice(server.api, code: code, deviceName: "tablet")
        #expect(linked.accountID == created.accountID && linked.deviceID != created.deviceID)
        #expect(try tablet.loadDevice() == Issued(linked, issuer: server.api.origin))
        #expect(throws: ClientError.self) { try tablet.linkDevice(server.api, code: code, deviceName: nil) }
    }

    @Test func aRetailerKeyIsKeptOnceAndRotatedInPlace() throws {
        let server = try TestServer(.socket, clock: .machine())
        let shop = try home()
        let registration = RetailerRegistration(name: "Matey's \(UUID().uuidString.prefix(4))", uuid: nil)
        #expect {
            _ = try shop.registerRetailer(server.api, registration, operatorToken: nil)
        } throws: { error in
            error as? ClientError == .notRegistered(.operatorToken)
        }
        let credentials = try shop.registerRetailer(server.api, registration, operatorToken: server.operatorToken)
        #expect(try shop.loadConfig().retailer == Issued(credentials, issuer: server.api.origin))
        // Registering again would lose the only copy of the key.
        #expect(throws: ClientError.self) {
            try shop.registerRetailer(server.api, registration, operatorToken: server.operatorToken)
        }

        let (key, saved) = try shop.rotateRetailerKey(server.api, environment: [:])
        let savedKey = try shop.loadConfig().retailer?.credentials.apiKey
        #expect(saved && key != credentials.apiKey && savedKey == key)
        // A key from the environment wins, and its successor is not saved anywhere.
        let elsewhere = try home()
        let (next, savedElsewhere) = try elsewhere.rotateRetailerKey(
            server.api, environment: ["LOYALTY_RETAILER_KEY": key])
        let elsewhereConfig = try elsewhere.loadConfig()
        #expect(!savedElsewhere && next != key && elsewhereConfig.retailer == nil)
        #expect(throws: ClientError.self) { try elsewhere.loadConfig().retailerCredential(environment: [:]) }
    }
}
