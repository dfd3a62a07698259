import Foundation

/// The rules both ends apply, so a client can refuse bad input before sending it.
public enum Validation {
    public static let beaconNumberRange = 0...65535
    public static let titleLength = 1...200
    public static let nameLength = 1...200
    public static let descriptionMaxLength = 2000
    public static let categoryMaxLength = 64
    public static let imageURLMaxLength = 2048
    public static let deviceNameMaxLength = 100
    public static let scheduleMaxLength = 500
    /// As many as fit well within the 64 KiB body limit.
    public static let seenItemsPerPush = 1...500
    /// What a device sends to `POST /v1/sightings` at once.
    public static let sightingsPerBatch = 1...100
    /// Limits and durations are stored as 32-bit integers.
    public static let countRange = 0...Int(Int32.max)
    /// Dates the server stores: 1970-01-01T00:00:00Z up to the end of year 9999.
    public static let timestampRange = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 253_402_300_799)

    /// A major or minor as it arrives in a path: a decimal 0...65535.
    public static func beaconNumber(_ text: String, field: String) throws(ValidationError) -> UInt16 {
        guard let value = Int(text), beaconNumberRange.contains(value), text.allSatisfy(\.isASCII) else {
            throw ValidationError(field: field, message: "must be an integer from 0 to 65535")
        }
        return UInt16(value)
    }

    /// `allowingLineBreaks`: tabs, CR and LF pass (input that is typed, never shown); NUL never does.
    public static func text(
        _ value: String, field: String, length: ClosedRange<Int>, allowingLineBreaks: Bool = false
    ) throws(ValidationError) {
        // Code points, as the schema's maxLength counts them: counted as grapheme clusters, one
        // "character" of thousands of combining marks would pass a 200-character limit.
        guard length.contains(value.unicodeScalars.count) else {
            throw ValidationError(
                field: field, message: "must be \(length.lowerBound) to \(length.upperBound) characters")
        }
        let lineBreaks: Set<Unicode.Scalar> = allowingLineBreaks ? ["\t", "\r", "\n"] : []
        if let (offset, scalar) = value.unicodeScalars.enumerated().first(where: {
            isRefusedInText($0.element) && !lineBreaks.contains($0.element)
        }) {
            let code = String(scalar.value, radix: 16, uppercase: true)
            throw ValidationError(
                field: field,
                message:
                    "must not contain control characters, line separators or bidirectional overrides "
                    + "(U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code) at character \(offset + 1))")
        }
    }

    /// C0 and C1 controls and DEL, U+2028/2029, and the bidirectional embeddings, overrides and isolates:
    /// printed on a shopper's terminal they clear the screen, forge lines or reverse text, making one
    /// retailer's offer look like another's.
    public static func isRefusedInText(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    public static func optionalText(
        _ value: String?, field: String, maxLength: Int, allowingLineBreaks: Bool = false
    ) throws(ValidationError) {
        if let value { try text(value, field: field, length: 0...maxLength, allowingLineBreaks: allowingLineBreaks) }
    }

    public static func imageURL(_ value: String?, field: String) throws(ValidationError) {
        guard let value else { return }
        try text(value, field: field, length: 1...imageURLMaxLength)
        guard imageURLExpression.firstMatch(in: value, range: NSRange(value.startIndex..., in: value)) != nil else {
            throw ValidationError(
                field: field,
                message: "must be an absolute http or https URL: a host name or IPv4 address, an optional port, a path "
                    + "and query of RFC 3986's characters; no user name, no fragment")
        }
    }

    /// openapi.yaml's pattern for `image_url`, the one rule (ContractTests compares the two): http or https, a host
    /// name or IPv4 address, an optional port from 1 to 65535, then a path and a query of RFC 3986's unreserved,
    /// sub-delims, ':' and '@' characters and percent-encoded bytes. No user name (`https://shop@evil.example/`
    /// reads as the shop's), no IPv6 literal, no fragment (it names nothing in a picture); nothing a client would
    /// have to escape in its markup or its HTTP requests (spaces, quotes, backslashes).
    public static let imageURLPattern =
        #"^https?://[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*"#
        + #"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?"#
        + #"(/([A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2})*)?"#
        + #"(\?([A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?$"#

    private static let imageURLExpression = try! NSRegularExpression(pattern: imageURLPattern)

    public static func timestamp(_ value: Date?, field: String) throws(ValidationError) {
        if let value, !timestampRange.contains(value) {
            throw ValidationError(
                field: field, message: "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z")
        }
    }

    public static func window(startsAt: Date?, endsAt: Date?) throws(ValidationError) {
        try timestamp(startsAt, field: "starts_at")
        try timestamp(endsAt, field: "ends_at")
        if let startsAt, let endsAt, endsAt <= startsAt {
            throw ValidationError(field: "ends_at", message: "must be after starts_at")
        }
    }

    /// A count or duration from `minimum` up to the largest 32-bit integer.
    public static func count(_ value: Int?, atLeast minimum: Int, field: String) throws(ValidationError) {
        if let value, value < minimum || value > countRange.upperBound {
            throw ValidationError(
                field: field, message: "must be an integer from \(minimum) to \(countRange.upperBound)")
        }
    }
}
