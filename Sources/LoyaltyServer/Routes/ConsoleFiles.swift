import Digest
import HTTPServer

/// The console's page, script, style sheet and icon, compiled into the binary (Resources/console.*): no files
/// beside the binary, no build step, nothing from another origin.
enum ConsoleFiles {
    /// Scripts and styles only from this origin and never inline, so markup that slipped through unescaped
    /// still runs nothing; no framing, no other origin to send data to, forms only to here. `no-cache`: a browser
    /// keeps a copy but asks each time whether it is current (a new binary's files show at once), and the ETag
    /// lets it ask with `If-None-Match` and be told 304.
    static let headers = [
        "Content-Security-Policy":
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-cache",
    ]

    /// Each file's answer, made once: its tag is a digest of its bytes, strong as the bytes never change.
    private static let files: [String: HTTPResponse] = [
        "index.html": response(PackageResources.console_html, type: "text/html; charset=utf-8"),
        "console.js": response(PackageResources.console_js, type: "text/javascript; charset=utf-8"),
        "console.css": response(PackageResources.console_css, type: "text/css; charset=utf-8"),
        "favicon.svg": response(PackageResources.favicon_svg, type: "image/svg+xml"),
    ]

    /// The file's 200, or a 304 when `request`'s If-None-Match names its tag; nil for no such file.
    static func answer(_ name: String, to request: HTTPRequest) -> HTTPResponse? {
        guard var response = files[name] else { return nil }
        if let tag = response.headers["ETag"], request.ifNoneMatchNames(tag) {
            // The body is not sent: it gives the 304 the 200's Content-Length.
            response.status = 304
        }
        return response
    }

    private static func response(_ bytes: [UInt8], type: String) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = type
        headers["ETag"] = "\"" + Secrets.base64URL(Array(SHA256.hash(bytes).prefix(16))) + "\""
        return HTTPResponse(status: 200, headers: headers, body: bytes)
    }
}
