import HTTPServer

/// The console's page, script, style sheet and icon, compiled into the binary (Resources/console.*): no files
/// beside the binary, no build step, nothing from another origin.
enum ConsoleFiles {
    /// Scripts and styles only from this origin and never inline, so markup that slipped through unescaped
    /// still runs nothing; no framing, no other origin to send data to, forms only to here.
    static let headers = [
        "Content-Security-Policy":
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-cache",
    ]

    static var page: HTTPResponse { response(PackageResources.console_html, type: "text/html; charset=utf-8") }

    static func file(named name: String) -> HTTPResponse? {
        switch name {
        case "index.html": page
        case "console.js": response(PackageResources.console_js, type: "text/javascript; charset=utf-8")
        case "console.css": response(PackageResources.console_css, type: "text/css; charset=utf-8")
        case "favicon.svg": response(PackageResources.favicon_svg, type: "image/svg+xml")
        default: nil
        }
    }

    private static func response(_ bytes: [UInt8], type: String) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = type
        return HTTPResponse(status: 200, headers: headers, body: bytes)
    }
}
