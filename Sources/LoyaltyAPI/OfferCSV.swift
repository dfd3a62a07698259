import Foundation
import JSONCoding

/// One offer of an import: where it goes and what it says.
public struct OfferImportRow: Sendable, Equatable {
    public var line: Int
    public var major: UInt16
    public var minor: UInt16
    public var draft: OfferDraft

    public init(line: Int, major: UInt16, minor: UInt16, draft: OfferDraft) {
        self.line = line
        self.major = major
        self.minor = minor
        self.draft = draft
    }
}

/// A row an import refused: its line in the file (the header is line 1), the column and why.
public struct OfferImportProblem: Codable, Sendable, Equatable, Error, CustomStringConvertible {
    public var line: Int
    public var field: String?
    public var message: String

    public init(line: Int, field: String?, message: String) {
        self.line = line
        self.field = field
        self.message = message
    }

    public var description: String { "line \(line): " + (field.map { "\($0) " } ?? "") + message }
}

/// `POST /v1/retailer/offers/import` and `GET /v1/retailer/offers/export`: offers as CSV (RFC 4180), one a
/// line. The header names the columns: `major,minor,title` are required, and any of `description`, `category`,
/// `image_url`, `starts_at`, `ends_at` (RFC 3339), `per_shopper_limit`, `total_limit`, `reshow_after_s`,
/// `schedule` (`OfferSchedule`), `shows_per_day` may follow, in any order; an empty cell is an absent value. A
/// UTF-8 byte order mark and CRLF line ends are read.
/// A cell a spreadsheet would run as a formula (one starting with = + - @, a tab or a CR) is exported behind a
/// single quote, as OWASP advises against CSV injection, and read back without it (`neutralised`).
public enum OfferCSV {
    public static let requiredColumns = ["major", "minor", "title"]
    public static let columns = requiredColumns + [
        "description", "category", "image_url", "starts_at", "ends_at", "per_shopper_limit", "total_limit",
        "reshow_after_s", "schedule", "shows_per_day",
    ]
    /// The most rows one import takes: a whole UUID's worth of a large chain's beacons, well within a request.
    public static let maxRows = 100_000
    /// The most problems an answer lists; the count says how many more there were.
    public static let maxProblemsListed = 100

    /// Every row of `bytes`, or every problem found (each row is checked, so one answer lists them all).
    public static func parse(_ bytes: [UInt8]) -> Result<[OfferImportRow], OfferImportFailure> {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(OfferImportFailure(problems: [OfferImportProblem(line: 1, field: nil, message: "the file is not UTF-8 text")]))
        }
        let records: [(line: Int, cells: [String])]
        do {
            // Bounded as it is read: a header of a million commas costs one refusal, not a million cells.
            records = try CSVRecords.parse(text, maxCells: columns.count, maxRecords: 1 + maxRows)
        } catch {
            return .failure(OfferImportFailure(problems: [error]))
        }
        guard let header = records.first else {
            return .failure(
                OfferImportFailure(problems: [
                    OfferImportProblem(line: 1, field: nil, message: "the file is empty: the first line names the columns")
                ]))
        }
        let names = header.cells.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var headerProblems: [OfferImportProblem] = []
        for name in names where !columns.contains(name) {
            headerProblems.append(
                OfferImportProblem(
                    line: 1, field: name, message: "is not a column; the columns are \(columns.joined(separator: ","))"))
        }
        for name in requiredColumns where !names.contains(name) {
            headerProblems.append(OfferImportProblem(line: 1, field: name, message: "is a required column"))
        }
        for (index, name) in names.enumerated() where names[..<index].contains(name) {
            headerProblems.append(OfferImportProblem(line: 1, field: name, message: "is named twice"))
        }
        if !headerProblems.isEmpty { return .failure(OfferImportFailure(problems: headerProblems)) }
        let rows = records.dropFirst()
        var problems: [OfferImportProblem] = []
        var parsed: [OfferImportRow] = []
        parsed.reserveCapacity(rows.count)
        var firstLine: [UInt32: Int] = [:]
        for record in rows {
            guard record.cells.count == names.count else {
                problems.append(
                    OfferImportProblem(
                        line: record.line, field: nil,
                        message: "has \(record.cells.count) cells; the header has \(names.count) columns"))
                continue
            }
            do {
                let cells = Dictionary(uniqueKeysWithValues: zip(names, record.cells.map(Self.restored)))
                let row = try offer(line: record.line, cells: cells)
                let beacon = UInt32(row.major) << 16 | UInt32(row.minor)
                if let earlier = firstLine[beacon] {
                    problems.append(
                        OfferImportProblem(
                            line: record.line, field: "minor",
                            message: "major \(row.major) minor \(row.minor) is on line \(earlier) too; a beacon has one offer"))
                } else {
                    firstLine[beacon] = record.line
                    parsed.append(row)
                }
            } catch {
                problems.append(OfferImportProblem(line: record.line, field: error.field, message: error.message))
            }
        }
        if !problems.isEmpty { return .failure(OfferImportFailure(problems: problems)) }
        return .success(parsed)
    }

    private static func offer(line: Int, cells: [String: String]) throws(ValidationError) -> OfferImportRow {
        func value(_ name: String) -> String? {
            guard let cell = cells[name], !cell.isEmpty else { return nil }
            return cell
        }
        func integer(_ name: String) throws(ValidationError) -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError(field: name, message: "must be an integer, not '\(text.prefix(40))'")
            }
            return number
        }
        func date(_ name: String) throws(ValidationError) -> Date? {
            guard let text = value(name) else { return nil }
            guard let date = LoyaltyJSON.parseTimestamp(text.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError(field: name, message: "must be an RFC 3339 date-time such as 2026-12-01T09:00:00Z")
            }
            return date
        }
        let major = try Validation.beaconNumber((cells["major"] ?? "").trimmingCharacters(in: .whitespaces), field: "major")
        let minor = try Validation.beaconNumber((cells["minor"] ?? "").trimmingCharacters(in: .whitespaces), field: "minor")
        let draft = OfferDraft(
            title: cells["title"] ?? "", description: value("description"), category: value("category"),
            imageURL: value("image_url"), startsAt: try date("starts_at"), endsAt: try date("ends_at"),
            perShopperLimit: try integer("per_shopper_limit"), totalLimit: try integer("total_limit"),
            reshowAfterSeconds: try integer("reshow_after_s"), schedule: value("schedule"),
            showsPerDay: try integer("shows_per_day"))
        try draft.validate()
        return OfferImportRow(line: line, major: major, minor: minor, draft: draft)
    }

    /// The offers as a file `parse` reads back: every column, CRLF line ends (RFC 4180).
    public static func export(_ offers: [Offer]) -> String {
        var text = columns.joined(separator: ",") + "\r\n"
        for offer in offers {
            let cells: [String?] = [
                String(offer.major), String(offer.minor), offer.title, offer.description, offer.category,
                offer.imageURL, offer.startsAt.map(LoyaltyJSON.formatTimestamp),
                offer.endsAt.map(LoyaltyJSON.formatTimestamp), String(offer.perShopperLimit),
                offer.totalLimit.map(String.init), offer.reshowAfterSeconds.map(String.init), offer.schedule,
                offer.showsPerDay.map(String.init),
            ]
            text += cells.map { quoted(neutralised($0 ?? "")) }.joined(separator: ",") + "\r\n"
        }
        return text
    }

    /// The first characters with which a spreadsheet takes a cell for a formula.
    private static let formulaStarts: Set<Character> = ["=", "+", "-", "@", "\t", "\r", "\r\n"]

    /// `cell` behind a single quote when a spreadsheet would run it, or when it starts with a quote that
    /// `restored` would take away: so `restored(neutralised(x)) == x` for every x.
    static func neutralised(_ cell: String) -> String {
        guard let first = cell.first else { return cell }
        let escapes = formulaStarts.contains(first) || (first == "'" && startsEscaped(cell))
        return escapes ? "'" + cell : cell
    }

    /// An exported cell as it was before `neutralised`.
    static func restored(_ cell: String) -> String {
        startsEscaped(cell) ? String(cell.dropFirst()) : cell
    }

    /// A quote followed by a formula start or another quote: what `neutralised` writes.
    private static func startsEscaped(_ cell: String) -> Bool {
        guard cell.first == "'", let second = cell.dropFirst().first else { return false }
        return second == "'" || formulaStarts.contains(second)
    }

    private static func quoted(_ cell: String) -> String {
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// Why an import wrote nothing: every problem found, each naming its line.
public struct OfferImportFailure: Error, Sendable, Equatable {
    public var problems: [OfferImportProblem]

    public init(problems: [OfferImportProblem]) { self.problems = problems }
}

/// RFC 4180 records: cells split by commas, quoted cells may hold commas, quotes ("") and line ends; LF and
/// CRLF both end a record. Blank lines are skipped. Each record keeps the line it starts on. A record of more
/// than `maxCells` cells, or more than `maxRecords` records, is refused where it is met.
enum CSVRecords {
    static func parse(_ text: String, maxCells: Int, maxRecords: Int) throws(OfferImportProblem)
        -> [(line: Int, cells: [String])]
    {
        var records: [(line: Int, cells: [String])] = []
        var cells: [String] = []
        var cell: [UInt8] = []
        var line = 1
        var recordLine = 1
        var quoted = false
        var afterQuote = false
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        var index = 0
        func endRecord() throws(OfferImportProblem) {
            cells.append(String(decoding: cell, as: UTF8.self))
            cell.removeAll(keepingCapacity: true)
            if !(cells.count == 1 && cells[0].isEmpty) {
                guard records.count < maxRecords else {
                    throw OfferImportProblem(
                        line: recordLine, field: nil,
                        message: "is past the limit of \(maxRecords - 1) offers an import takes; split the file")
                }
                records.append((recordLine, cells))
            }
            cells = []
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                        cell.append(byte)
                        index += 1
                    } else {
                        quoted = false
                        afterQuote = true
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    cell.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                guard cells.count + 1 < maxCells else {
                    throw OfferImportProblem(
                        line: recordLine, field: nil,
                        message: "has more than \(maxCells) cells; the columns are \(OfferCSV.columns.joined(separator: ","))")
                }
                cells.append(String(decoding: cell, as: UTF8.self))
                cell.removeAll(keepingCapacity: true)
                afterQuote = false
            case UInt8(ascii: "\r") where index < bytes.count && bytes[index] == UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "\n"):
                try endRecord()
                afterQuote = false
                line += 1
                recordLine = line
            case UInt8(ascii: "\"") where cell.isEmpty && !afterQuote:
                quoted = true
            default:
                if afterQuote {
                    throw OfferImportProblem(line: line, field: nil, message: "has text after a quoted cell's closing quote")
                }
                if byte == UInt8(ascii: "\"") {
                    throw OfferImportProblem(
                        line: line, field: nil, message: "has a quote inside an unquoted cell; quote the cell and double the quote")
                }
                cell.append(byte)
            }
        }
        if quoted {
            throw OfferImportProblem(line: recordLine, field: nil, message: "opens a quoted cell that never closes")
        }
        return records
    }
}
