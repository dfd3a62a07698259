import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

extension Tenants {
    /// Every string field of every request body.
    func stringFields() -> [StringField] {
        let alice = alice.apiKey
        func offer(_ before: String, _ after: String = #""}"#) -> (Tenants) throws -> BodyTemplate {
            { _ in
                BodyTemplate(
                    method: "PUT", path: "/v1/retailer/offers/3/3", token: alice, before: before, after: after
                )
            }
        }
        let readOffer: (Tenants, TestResponse) throws -> Offer? = { tenants, _ in
            try tenants.server.request("GET", "/v1/retailer/offers", token: alice).decode(OfferList.self)
                .offers
                .first { $0.major == 3 && $0.minor == 3 }
        }
        let readDeviceName: (Tenants, TestResponse) throws -> String? = { tenants, reply in
            let device: DeviceCredentials = try reply.decode()
            return try tenants.server.request("GET", "/v1/devices", token: device.deviceToken).decode(
                DeviceList.self
            )
            .devices.first(where: \.current)?.name
        }
        let readBeacon: (Tenants, TestResponse) throws -> FleetBeacon? = { tenants, _ in
            try tenants.server.request("GET", "/v1/retailer/fleet", token: alice).decode(BeaconFleet.self).beacons
                .first { $0.major == 8 && $0.minor == 8 }
        }
        func beacon(_ before: String, _ after: String = #""}"#) -> (Tenants) throws -> BodyTemplate {
            { _ in
                BodyTemplate(method: "PUT", path: "/v1/retailer/fleet/8/8", token: alice, before: before, after: after)
            }
        }
        return [
            StringField(
                name: "beacon name", field: "name", maxLength: Validation.beaconNameLength.upperBound,
                template: beacon(#"{"name":""#), readBack: { try readBeacon($0, $1)?.name }),
            StringField(
                name: "beacon placement", field: "placement", maxLength: Validation.beaconPlacementMaxLength,
                template: beacon(#"{"name":"n","placement":""#), readBack: { try readBeacon($0, $1)?.placement }),
            StringField(
                name: "retailer name", field: "name", maxLength: Validation.nameLength.upperBound, isFolded: true,
                template: { tenants in
                    BodyTemplate(
                        method: "POST", path: "/v1/retailers", token: tenants.server.operatorToken,
                        before: #"{"name":""#,
                        after: #""}"#)
                },
                readBack: { tenants, reply in
                    let key = try reply.decode(RetailerCredentials.self).apiKey
                    return try tenants.server.request("GET", "/v1/retailer", token: key).decode(Retailer.self)
                        .name
                }),
            StringField(
                name: "offer title", field: "title", maxLength: Validation.titleLength.upperBound,
                template: offer(#"{"title":""#), readBack: { try readOffer($0, $1)?.title }),
            StringField(
                name: "offer description", field: "description", maxLength: Validation.descriptionMaxLength,
                template: offer(#"{"title":"t","description":""#),
                readBack: { try readOffer($0, $1)?.description }),
            StringField(
                name: "offer category", field: "category", maxLength: Validation.categoryMaxLength,
                template: offer(#"{"title":"t","category":""#),
                readBack: { try readOffer($0, $1)?.category }),
            StringField(
                name: "offer image URL", field: "image_url", maxLength: Validation.imageURLMaxLength,
                prefix: "https://example.com/", isFreeText: false,
                template: offer(#"{"title":"t","image_url":""#),
                readBack: { try readOffer($0, $1)?.imageURL }),
            StringField(
                name: "store name", field: "name", maxLength: Validation.nameLength.upperBound,
                template: { _ in
                    BodyTemplate(
                        method: "PUT", path: "/v1/retailer/stores/s1", token: alice, before: #"{"name":""#,
                        after: #"","latitude":1,"longitude":1,"radius_m":100}"#)
                },
                readBack: { tenants, _ in
                    try tenants.server.request("GET", "/v1/retailer/stores", token: alice).decode(
                        StoreList.self
                    ).stores
                        .first { $0.storeID == "s1" }?.name
                }),
            StringField(
                name: "first device name", field: "name", maxLength: Validation.deviceNameMaxLength,
                template: { _ in
                    BodyTemplate(
                        method: "POST", path: "/v1/accounts", token: nil, before: #"{"name":""#, after: #""}"#)
                },
                readBack: readDeviceName),
            StringField(
                name: "linked device name", field: "name", maxLength: Validation.deviceNameMaxLength,
                template: { tenants in
                    let code: LinkCode = try tenants.server.request(
                        "POST", "/v1/link-codes", token: tenants.ann.deviceToken
                    ).decode()
                    return BodyTemplate(
                        method: "POST", path: "/v1/devices", token: nil,
                        before: #"{"code":"\#(code.code)","name":""#,
                        after: #""}"#)
                },
                readBack: readDeviceName),
            StringField(
                name: "link code", field: "code", maxLength: 32, isFreeText: false,
                template: { _ in
                    BodyTemplate(
                        method: "POST", path: "/v1/devices", token: nil, before: #"{"code":""#, after: #""}"#)
                },
                readBack: { _, _ in nil }),
        ]
    }
}

/// A JSON body with a hole for one string's content (the bytes between its quotes, sent as they are).
struct BodyTemplate {
    var method: String
    var path: String
    var token: String?
    var before: String
    var after: String

    func send(to server: TestServer, content: [UInt8]) throws -> TestResponse {
        try server.request(
            method, path, token: token, body: Array(before.utf8) + content + Array(after.utf8))
    }
}

/// A string field of a request body: its limit, how to send it, and how to read back what was stored.
struct StringField: CustomStringConvertible {
    var name: String
    /// As the 422 answer names it.
    var field: String
    var maxLength: Int
    /// Every value sent starts with this (an image URL needs its scheme and host).
    var prefix = ""
    /// Any text is a valid value (not so for URLs and link codes).
    var isFreeText = true
    /// Stored as `RetailerName.folded`, and refused when it reads as one stored before (a retailer's name).
    var isFolded = false
    /// Makes the request (and whatever it needs first, such as a fresh link code).
    var template: (Tenants) throws -> BodyTemplate
    /// The value as stored, read with a GET after a 2xx `reply`.
    var readBack: (Tenants, TestResponse) throws -> String?

    var description: String { name }

    /// `value` is accepted, then read back with the same bytes (no normalisation, nothing trimmed), or folded as a
    /// retailer's name is.
    func expectStored(
        _ value: String, _ tenants: Tenants, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reply = try template(tenants).send(to: tenants.server, content: jsonStringContent(value))
        if field == "code" {
            #expect(
                reply.status == 404 && reply.errorCode == .linkCodeInvalid, "\(reply.text)",
                sourceLocation: sourceLocation)
            return
        }
        #expect(
            (200..<300).contains(reply.status), "\(name) \(value.debugDescription): \(reply.text)",
            sourceLocation: sourceLocation)
        guard (200..<300).contains(reply.status) else { return }
        let stored = try readBack(tenants, reply)
        #expect(
            stored.map { Array($0.utf8) } == Array((isFolded ? RetailerName.folded(value) : value).utf8),
            "\(name): \(stored.debugDescription)",
            sourceLocation: sourceLocation)
    }

    func expectRefused(
        _ value: String, _ tenants: Tenants, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let template = try template(tenants)
        let before = try tenants.server.rows()
        let reply = try template.send(to: tenants.server, content: jsonStringContent(value))
        #expect(
            reply.status == 422 && reply.errorField == field, "\(name): \(reply.status) \(reply.text)",
            sourceLocation: sourceLocation)
        #expect(
            try tenants.server.rows() == before, "\(name): a refused value was stored",
            sourceLocation: sourceLocation)
    }
}

/// The JSON text of a string without its quotes.
func jsonStringContent(_ text: String) -> [UInt8] {
    Array(try! LoyaltyJSON.encoder().encode(text).dropFirst().dropLast())
}
