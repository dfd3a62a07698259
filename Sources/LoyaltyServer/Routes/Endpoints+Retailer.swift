import Foundation
import HTTPServer
import LoyaltyAPI

/// Offers in bulk (CSV), figures over time, beacon health and the beacon fleet.
extension Endpoints {
    var bulkOfferRoutes: [(method: String, pattern: String, handler: Handler)] {
        [
            ("POST", "/v1/retailer/offers/import", importOffers),
            ("GET", "/v1/retailer/offers/export", exportOffers),
        ]
    }

    var figureRoutes: [(method: String, pattern: String, handler: Handler)] {
        [
            ("GET", "/v1/retailer/figures", figures),
            ("GET", "/v1/retailer/beacons", beaconHealth),
            ("GET", "/v1/retailer/fleet", fleet),
            ("PUT", "/v1/retailer/fleet/{major}/{minor}", labelBeacon),
        ]
    }

    /// All rows or none: every problem is listed (up to `OfferCSV.maxProblemsListed`) with its line, and
    /// nothing is written while there is one.
    func importOffers(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        switch OfferCSV.parse(request.body) {
        case .success(let rows):
            return .json(200, try database.importOffers(retailerID: retailer.id, rows: rows))
        case .failure(let failure):
            let problems = failure.problems
            let more = problems.count > OfferCSV.maxProblemsListed
                ? " (and \(problems.count - OfferCSV.maxProblemsListed) more)" : ""
            var answer = APIFailure(
                422, .validationFailed, "nothing was imported: \(problems[0])\(more)", field: problems[0].field)
            answer.body.error.rows = Array(problems.prefix(OfferCSV.maxProblemsListed))
            throw answer
        }
    }

    func exportOffers(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        return HTTPResponse(
            status: 200,
            headers: [
                "Content-Type": "text/csv; charset=utf-8",
                "Content-Disposition": "attachment; filename=\"offers.csv\"",
            ],
            body: Array(OfferCSV.export(try database.offers(retailerID: retailer.id)).utf8))
    }

    func figures(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        return .json(200, try database.figures(retailerID: retailer.id, days: try days(request, "days", default: 30)))
    }

    func beaconHealth(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        return .json(
            200, try database.beaconHealth(retailerID: retailer.id, quietDays: try days(request, "quiet_days", default: 7)))
    }

    func fleet(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        return .json(
            200,
            try database.fleet(
                retailerID: retailer.id, days: try days(request, "days", default: 14),
                quietDays: try days(request, "quiet_days", default: 7)))
    }

    func labelBeacon(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailer(request)
        let (major, minor) = try beacon(request)
        let label = try request.decodeBody(BeaconLabel.self)
        let created = try database.labelBeacon(retailerID: retailer.id, major: major, minor: minor, label: label)
        return .json(created ? 201 : 200, label)
    }

    private func days(_ request: HTTPRequest, _ name: String, default value: Int) throws(ValidationError) -> Int {
        guard let text = request.query[name] else { return value }
        guard let days = Int(text), Validation.figureDays.contains(days) else {
            throw ValidationError(
                field: name,
                message: "must be an integer from \(Validation.figureDays.lowerBound) to \(Validation.figureDays.upperBound)")
        }
        return days
    }
}

extension LoyaltyService {
    /// Routes that take more than the usual 64 KiB: an import of `OfferCSV.maxRows` offers.
    public static let maxBodyBytesByPath = ["/v1/retailer/offers/import": 32 << 20]
}

extension Endpoints {
    /// With `limit` (1 to 1,000) or `after` (`MAJOR.MINOR`, a page's `next`): one page of the offers; nil
    /// without either (the whole list, as before paging).
    func offerPage(_ request: HTTPRequest, retailerID: UUID) throws -> OfferList? {
        let limitText = request.query["limit"]
        let afterText = request.query["after"]
        guard limitText != nil || afterText != nil else { return nil }
        var limit = 100
        if let limitText {
            guard let value = Int(limitText), (1...1000).contains(value) else {
                throw ValidationError(field: "limit", message: "must be an integer from 1 to 1000")
            }
            limit = value
        }
        var after: (major: UInt16, minor: UInt16)?
        if let afterText {
            let parts = afterText.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let major = UInt16(parts[0]), let minor = UInt16(parts[1]) else {
                throw ValidationError(field: "after", message: "must be MAJOR.MINOR, a page's next")
            }
            after = (major, minor)
        }
        return try database.offerPage(retailerID: retailerID, after: after, limit: limit)
    }
}
