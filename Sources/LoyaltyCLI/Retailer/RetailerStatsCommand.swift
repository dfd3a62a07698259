import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private let statsDays = Option<Int>(
    "days", value: "N", help: "Also the last N days, per day, and beacons unheard for N days (1 to 366).",
    expected: "a whole number of days, 1 to 366"
) { Int($0).flatMap { Validation.figureDays.contains($0) ? $0 : nil } }

let retailerStatsCommand = Command(
    name: "stats",
    summary: "Per offer: shoppers who saw it, redemptions, codes accepted at the till, what remains.",
    discussion: clientDiscussion, options: [statsDays] + ClientOptions.all,
    run: clientCommand { context in
        let credential = try context.retailerCredential()
        let days = context.arguments.value(statsDays)
        let statistics = try context.api.statistics(credential).offers
        let figures = try days.map { days throws(ClientError) in try context.api.figures(days: days, credential) }
        let health = try days.map { days throws(ClientError) in try context.api.beaconHealth(quietDays: days, credential) }
        context.output.emit(
            text: ([ClientText.statistics(statistics)] + [figures.map(ClientText.figures), health.map(ClientText.beaconHealth)]
                .compactMap { $0 }).joined(),
            jsonLines: statistics.map(ClientJSONLines.statistics) + (figures?.total.map(ClientJSONLines.day) ?? [])
                + (health?.beacons.map(ClientJSONLines.beacon) ?? []))
    })
