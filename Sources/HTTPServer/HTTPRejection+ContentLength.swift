internal import CMicroHTTPD
import Foundation

// MHD 0.9.75 answers a Content-Length it cannot read itself, twice over: the server answers first, on the socket.

/// The answer to one of the messages MHD 0.9.75 logs just before it answers a Content-Length it cannot read.
func contentLengthRejection(_ message: String, _ context: ServerContext) -> HTTPRejection? {
    if message.hasPrefix("Failed to parse `Content-Length' header") {
        return .malformedFraming("Content-Length is not a number of bytes")
    }
    if message.hasPrefix("Too large value of 'Content-Length' header") {
        // Past any route's limit, whichever the request is for.
        return .bodyTooLarge(limit: context.maxBodyBytesByPath.values.reduce(context.maxBodyBytes, max))
    }
    return nil
}

/// Sends `response` on a connection's socket, outside MHD, and ends the sending side: only for a request whose
/// body MHD is still reading, when MHD has nothing of its own to send on it.
func writeDirectly(_ response: HTTPResponse, toSocket socket: Int32) {
    guard socket >= 0 else { return }
    let reason = MHD_get_reason_phrase_for(UInt32(response.status)).map { String(cString: $0) } ?? ""
    var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
    for (name, value) in response.headers
    where !name.isHeaderName("content-length") && !name.isHeaderName("connection") {
        guard !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }) else { continue }
        head += "\(name): \(value)\r\n"
    }
    head += "Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"
    let bytes = Array(head.utf8) + response.body
    // A few hundred bytes into an idle socket's empty buffer: one send takes them all.
    _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    shutdown(socket, Int32(SHUT_WR))
}
