import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

private let statsDays = Option<Int>(
    "days", value: "N", help: "Also the last N days, per day, and beacons unheard for N days (1 to 366).") { Int($0) }

let retailerStats = Command(
    name: "stats",
    summary: "Per offer: shoppers who saw it, redemptions, codes accepted at the till, what remains.",
    synopsis: "[--days N]", discussion: clientDiscussion, options: [statsDays] + ClientOptions.all,
    run: clientCommand { context in
        let credential = try context.retailerCredential()
        let days = try context.arguments.value(statsDays)
        if let days, !Validation.figureDays.contains(days) {
            throw context.arguments.usageError("--days must be 1 to 366")
        }
        let statistics = try context.api.statistics(credential).offers
        let figures = try days.map { days throws(ClientError) in try context.api.figures(days: days, credential) }
        let health = try days.map { days throws(ClientError) in try context.api.beaconHealth(quietDays: days, credential) }
        if context.json {
            statistics.forEach { printOut(ClientJSONLines.statistics($0)) }
            for day in figures?.total ?? [] { printJSONLine([("event", .string("day"))] + dayFields(day)) }
            for beacon in health?.beacons ?? [] {
                printJSONLine([
                    ("event", .string("beacon")), ("major", .int(Int(beacon.major))), ("minor", .int(Int(beacon.minor))),
                    ("last_heard_at", ClientJSONLines.timestamp(beacon.lastHeardAt)), ("check_battery", .bool(beacon.checkBattery)),
                ])
            }
            return
        }
        printTable(
            ["BEACON", "TITLE", "SEEN BY", "REDEEMED", "ACCEPTED", "REMAINING"],
            statistics.map { entry in
                [
                    "\(entry.major):\(entry.minor)", entry.title, String(entry.seenBy),
                    String(entry.redemptions), String(entry.accepted),
                    entry.remaining.map(String.init) ?? "unlimited",
                ]
            })
        if let figures {
            printOut("\nall offers, the last \(figures.days) days (UTC):")
            printTable(
                ["DAY", "SHOWN", "SHOPPERS", "REDEEMED", "ACCEPTED", "CONVERSION"],
                figures.total.map { day in
                    [
                        day.date, String(day.shown), String(day.uniqueShoppers), String(day.redeemed),
                        String(day.accepted), day.conversion.map { String(format: "%.0f%%", $0 * 100) } ?? "-",
                    ]
                })
        }
        if let health {
            let quiet = health.beacons.filter(\.checkBattery)
            printOut("\n\(quiet.count) of \(health.beacons.count) beacons unheard for \(health.quietDays) days")
            if !quiet.isEmpty {
                printTable(
                    ["BEACON", "TITLE", "LAST HEARD", "CHECK"],
                    quiet.map { ["\($0.major):\($0.minor)", $0.title, timestamp($0.lastHeardAt), "check its battery"] })
            }
        }
    })

private func dayFields(_ day: DayFigures) -> [(String, JSONValue)] {
    [
        ("date", .string(day.date)), ("shown", .int(day.shown)), ("unique_shoppers", .int(day.uniqueShoppers)),
        ("redeemed", .int(day.redeemed)), ("accepted", .int(day.accepted)),
        ("conversion", day.conversion.map { .double($0) } ?? .null),
    ]
}
