import Compression

extension HTTPResponse {
    /// Answers shorter than this go as they are: gzip's header and trailer (18 bytes) and the work are not worth it
    /// for an error or a 304's headers, and a packet holds them anyway.
    public static let gzipMinimumBytes = 1024

    /// This answer as `request` may take it: gzipped (`Content-Encoding: gzip`) when its Accept-Encoding allows gzip
    /// and the body is long enough and not compressed already. Every answer that could be gzipped says
    /// `Vary: Accept-Encoding`, gzipped or not, so a cache keeps the two apart. A strong ETag of a gzipped answer
    /// becomes weak (as nginx does): the bytes differ, the content does not, and If-None-Match compares weakly.
    func gzipped(for request: HTTPRequest) -> HTTPResponse {
        guard body.count >= Self.gzipMinimumBytes, ![204, 206, 304].contains(status), isCompressible else {
            return self
        }
        var response = self
        response.headers[headerName("Vary") ?? "Vary"] = headerValue("Vary").map { "\($0), Accept-Encoding" }
            ?? "Accept-Encoding"
        guard Self.acceptsGzip(request.header("accept-encoding")) else { return response }
        response.body = Gzip.compress(body)
        response.headers["Content-Encoding"] = "gzip"
        if let name = headerName("ETag"), let tag = headers[name], !tag.hasPrefix("W/") {
            response.headers[name] = "W/" + tag
        }
        return response
    }

    /// Not when it says an encoding of its own, nor a type that is compressed already (a PNG, an archive).
    private var isCompressible: Bool {
        guard headerName("Content-Encoding") == nil else { return false }
        let type = headerValue("Content-Type")?.lowercased() ?? ""
        if type.hasPrefix("image/") { return type.hasPrefix("image/svg") }
        return !["application/gzip", "application/zip", "application/octet-stream", "application/zstd"]
            .contains { type.hasPrefix($0) }
    }

    private func headerName(_ name: String) -> String? {
        headers.keys.first { $0.lowercased() == name.lowercased() }
    }

    private func headerValue(_ name: String) -> String? { headerName(name).flatMap { headers[$0] } }

    /// Whether an Accept-Encoding value (RFC 9110 section 12.5.3) takes gzip: `gzip` (or `x-gzip`) with a weight
    /// above 0, or else `*` with one. No header: identity only, as curl and most clients send none unless asked.
    static func acceptsGzip(_ value: String?) -> Bool {
        guard let value else { return false }
        var wildcard: Bool?
        for member in value.split(separator: ",") {
            let parts = member.split(separator: ";")
            guard let coding = parts.first?.trimmingOptionalWhitespace.lowercased() else { continue }
            let weight = parts.dropFirst().lazy.compactMap { parameter -> Double? in
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingOptionalWhitespace.lowercased() == "q" else { return nil }
                return Double(pair[1].trimmingOptionalWhitespace)
            }.first ?? 1
            if coding == "gzip" || coding == "x-gzip" { return weight > 0 }
            if coding == "*" { wildcard = weight > 0 }
        }
        return wildcard ?? false
    }
}
