internal import CCurl

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 client on one libcurl easy handle, reused from request to request so the connection
/// stays open (keep-alive). Confined to one task at a time: make one client per concurrent caller.
public final class HTTPClient {
    private var handle: EasyHandle?

    public init() {}

    public func send(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        if handle == nil { handle = try EasyHandle() }
        return try handle!.perform(request)
    }
}

/// libcurl's entry points, loaded on the first request (`CCurl/shim.h` says why), and `curl_global_init`
/// called, which libcurl wants once per process before any other call and not concurrently with one: a
/// global is initialized exactly once, on first use, under a lock.
private let curlLibrary = CurlLibrary()

private struct CurlLibrary: @unchecked Sendable {  // function pointers set once, then only read
    let api: loyalty_curl
    /// Why libcurl could not be loaded, or nil.
    let problem: String?

    init() {
        var api = loyalty_curl()
        if loyalty_curl_load(&api) == 0 {
            let code = api.global_init(Int(CURL_GLOBAL_ALL))
            let reason = api.easy_strerror(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
            problem = code == CURLE_OK ? nil : "libcurl could not initialize (curl_global_init: \(reason))"
        } else {
            let reason = dlerror().map { String(cString: $0) } ?? "a libcurl entry point is missing"
            problem = "libcurl (libcurl.so.4, Debian package libcurl4) could not be loaded: \(reason)"
        }
        self.api = api
    }
}

/// Owns one CURL easy handle and the error buffer libcurl writes into.
private final class EasyHandle {
    private let curl: UnsafeMutableRawPointer
    private let api: loyalty_curl
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init() throws(HTTPClientError) {
        let library = curlLibrary
        if let problem = library.problem {
            errorBuffer.deallocate()
            throw .libraryUnavailable(problem)
        }
        api = library.api
        guard let curl = api.easy_init() else {
            errorBuffer.deallocate()
            throw .libraryUnavailable("libcurl could not create a connection handle (curl_easy_init): out of memory?")
        }
        self.curl = curl
    }

    deinit {
        api.easy_cleanup(curl)
        errorBuffer.deallocate()
    }

    func perform(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        // Reset clears the previous request's options but keeps the open connections.
        api.easy_reset(curl)
        errorBuffer[0] = 0
        let headerList = try headerList(request.headers)
        defer { api.slist_free_all(headerList) }
        let received = ReceivedResponse(maximumBodyBytes: request.maximumResponseBytes, bodyFile: request.bodyFile)
        let receivedPointer = Unmanaged.passUnretained(received).toOpaque()

        setLong(CURLOPT_NOSIGNAL, 1)  // no SIGALRM for timeouts: this runs on any thread
        setPointer(CURLOPT_ERRORBUFFER, errorBuffer)
        setPointer(CURLOPT_URL, request.url)
        setPointer(CURLOPT_PROTOCOLS_STR, "http,https")
        if let caFile = request.caFile { setPointer(CURLOPT_CAINFO, caFile) }
        setLong(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout))
        setLong(CURLOPT_TIMEOUT_MS, Self.milliseconds(request.totalTimeout))
        _ = loyalty_curl_easy_setopt_slist(api.easy_setopt, curl, CURLOPT_HTTPHEADER, headerList)
        _ = loyalty_curl_easy_setopt_write_callback(api.easy_setopt, curl, CURLOPT_WRITEFUNCTION, receiveBody)
        setPointer(CURLOPT_WRITEDATA, receivedPointer)
        _ = loyalty_curl_easy_setopt_write_callback(api.easy_setopt, curl, CURLOPT_HEADERFUNCTION, receiveHeader)
        setPointer(CURLOPT_HEADERDATA, receivedPointer)
        // libcurl asks for gzip and hands the write callback the decoded bytes, so the limit below counts what the
        // body expands to: a small gzip bomb stops at it like any long body.
        if request.acceptsGzip { setPointer(CURLOPT_ACCEPT_ENCODING, "gzip") }
        // A Content-Length past the limit is refused before any of the body is read; the write callback
        // catches a body that does not say its length (or, gzipped, says the length of its compressed bytes).
        _ = loyalty_curl_easy_setopt_off_t(
            api.easy_setopt, curl, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maximumResponseBytes))
        if let isCancelled = request.isCancelled {
            received.isCancelled = isCancelled
            setLong(CURLOPT_NOPROGRESS, 0)
            _ = loyalty_curl_easy_setopt_xferinfo_callback(api.easy_setopt, curl, CURLOPT_XFERINFOFUNCTION, checkCancelled)
            setPointer(CURLOPT_XFERINFODATA, receivedPointer)
        }
        let method = request.method.uppercased()
        if let body = request.body {
            // A body makes it a POST; the custom request line turns that into PUT, PATCH, DELETE...
            // libcurl copies the bytes (COPYPOSTFIELDS reads the size set just before).
            _ = loyalty_curl_easy_setopt_off_t(api.easy_setopt, curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes { bytes in
                if let start = bytes.baseAddress {
                    setPointer(CURLOPT_COPYPOSTFIELDS, start)
                } else {
                    setPointer(CURLOPT_COPYPOSTFIELDS, "")
                }
            }
            if method != "POST" { setPointer(CURLOPT_CUSTOMREQUEST, method) }
        } else if method == "HEAD" {
            setLong(CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            setPointer(CURLOPT_CUSTOMREQUEST, method)
        }
        let code = withExtendedLifetime(received) { api.easy_perform(curl) }

        guard code == CURLE_OK else {
            throw received.fileError.map { .transport(code: Int(CURLE_WRITE_ERROR.rawValue), detail: $0) }
                ?? error(code, request, tooLarge: received.tooLarge)
        }
        var status = 0
        _ = loyalty_curl_easy_getinfo_long(api.easy_getinfo, curl, CURLINFO_RESPONSE_CODE, &status)
        return HTTPClientResponse(status: status, headers: received.headers, body: received.body)
    }

    private func setLong(_ option: CURLoption, _ value: Int) {
        _ = loyalty_curl_easy_setopt_long(api.easy_setopt, curl, option, value)
    }

    private func setPointer(_ option: CURLoption, _ value: UnsafeRawPointer) {
        _ = loyalty_curl_easy_setopt_pointer(api.easy_setopt, curl, option, value)
    }

    /// libcurl copies string options, so a temporary C string is enough.
    private func setPointer(_ option: CURLoption, _ value: String) {
        _ = loyalty_curl_easy_setopt_pointer(api.easy_setopt, curl, option, value)
    }

    /// `tooLarge`: the write callback stopped the body at the request's limit.
    private func error(_ code: CURLcode, _ request: HTTPClientRequest, tooLarge: Bool) -> HTTPClientError {
        let detail =
            errorBuffer[0] != 0
            ? String(cString: errorBuffer) : api.easy_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        switch code {
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled(url: request.url)
        case CURLE_FILESIZE_EXCEEDED:
            return .responseTooLarge(url: request.url, limit: request.maximumResponseBytes)
        case CURLE_WRITE_ERROR where tooLarge:
            return .responseTooLarge(url: request.url, limit: request.maximumResponseBytes)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE:
            return .untrustedCertificate(url: request.url, detail: detail)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .couldNotConnect(url: request.url, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            var connectMicroseconds: curl_off_t = 0
            _ = loyalty_curl_easy_getinfo_off_t(api.easy_getinfo, curl, CURLINFO_CONNECT_TIME_T, &connectMicroseconds)
            let seconds = connectMicroseconds == 0 ? request.connectTimeout : request.totalTimeout
            return .timedOut(url: request.url, seconds: seconds)
        default:
            return .transport(code: Int(code.rawValue), detail: detail)
        }
    }

    /// At least 1 ms: libcurl reads 0 as "no timeout".
    private static func milliseconds(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return Int(Int32.max) }
        return Int(min(max(seconds * 1000, 1), Double(Int32.max)).rounded(.up))
    }

    /// "Name: value" lines. libcurl reads "Name:" as "remove this header", so an empty value is
    /// sent as "Name;". A line break in a name or value would inject headers: refused.
    private func headerList(
        _ headers: [String: String]
    ) throws(HTTPClientError) -> UnsafeMutablePointer<curl_slist>? {
        // "Expect:" stops libcurl from waiting for "100 Continue" before it sends a large body.
        var lines = ["Expect:"]
        for (name, value) in headers {
            let forbidden: Set<UInt8> = [UInt8(ascii: "\r"), UInt8(ascii: "\n"), 0]
            guard !name.isEmpty, !name.utf8.contains(UInt8(ascii: ":")),
                !name.utf8.contains(where: forbidden.contains), !value.utf8.contains(where: forbidden.contains)
            else {
                throw .transport(
                    code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue),
                    detail: "request header '\(name)' has a colon, a line break or a NUL byte and cannot be sent")
            }
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        return lines.reduce(nil) { list, line in api.slist_append(list, line) }
    }
}

/// What the callbacks collect during one transfer, and what they ask whether to go on.
private final class ReceivedResponse {
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    var isCancelled: (@Sendable () -> Bool)?
    let maximumBodyBytes: Int
    /// The body went past `maximumBodyBytes`: the transfer was stopped there.
    var tooLarge = false
    /// Where a 2xx body goes (`HTTPClientRequest.bodyFile`), and how much of it went there.
    let bodyFile: Int32?
    var bodyFileBytes = 0
    /// The answer's status is 2xx: set from its status line.
    var succeeded = false
    /// Why writing the body to `bodyFile` failed.
    var fileError: String?

    init(maximumBodyBytes: Int, bodyFile: Int32?) {
        self.maximumBodyBytes = maximumBodyBytes
        self.bodyFile = bodyFile
    }

    /// Appends `bytes` to the body (in memory or in its file); false when the transfer must stop.
    func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let bodyFile, succeeded else {
            guard bytes.count <= maximumBodyBytes - body.count else {
                tooLarge = true
                return false
            }
            body.append(contentsOf: bytes)
            return true
        }
        guard bytes.count <= maximumBodyBytes - bodyFileBytes else {
            tooLarge = true
            return false
        }
        var written = 0
        while written < bytes.count {
            let count = write(bodyFile, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                fileError = "could not write the answer to a temporary file: \(String(cString: strerror(errno)))"
                return false
            }
            written += count
        }
        bodyFileBytes += written
        return true
    }
}

/// libcurl's progress callback, called about once a second even while nothing moves: non-zero aborts.
private let checkCancelled: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = {
    context, _, _, _, _ in
    guard let context else { return 0 }
    return Unmanaged<ReceivedResponse>.fromOpaque(context).takeUnretainedValue().isCancelled?() == true ? 1 : 0
}

private let receiveBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let context else { return 0 }
    let received = Unmanaged<ReceivedResponse>.fromOpaque(context).takeUnretainedValue()
    // Not the count given: libcurl stops with CURLE_WRITE_ERROR.
    return received.take(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
}

/// Called once per header line, status line and blank line included. A new status line starts a
/// new response (after "100 Continue"), so the headers collected so far are dropped.
private let receiveHeader: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let context else { return 0 }
    let received = Unmanaged<ReceivedResponse>.fromOpaque(context).takeUnretainedValue()
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
    if line.hasPrefix("HTTP/") {
        received.headers = [:]
        received.succeeded = line.split(separator: " ").dropFirst().first?.first == "2"
    } else if let colon = line.firstIndex(of: ":") {
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
        received.headers[name] = received.headers[name].map { "\($0), \(value)" } ?? value
    }
    return size * count
}

extension Substring {
    fileprivate func trimmingCharacters(in characters: String) -> String {
        String(drop(while: characters.contains).reversed().drop(while: characters.contains).reversed())
    }
}
