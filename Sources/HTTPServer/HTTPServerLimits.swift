import Foundation

/// What one server accepts: body sizes, connections, receive times.
public struct HTTPServerLimits: Sendable {
    /// Longer bodies are refused with `HTTPRejection.bodyTooLarge` and never buffered.
    public var maxBodyBytes: Int = 64 * 1024
    /// Paths whose bodies may be longer than `maxBodyBytes` (a bulk upload), with their own limit.
    public var maxBodyBytesByPath: [String: Int] = [:]
    /// Connections beyond this are closed on accept.
    public var connectionLimit: Int = 1024
    /// Connections from one client address beyond this are closed on accept, so one client cannot hold them
    /// all (0: no limit). Above the 64 connections of `make check`'s load test, which come from one address.
    public var connectionsPerClientAddress: Int = 128
    /// An idle connection is closed after this long.
    public var connectionTimeoutSeconds: Int = 30
    /// A request's head (its request line and headers) must be in whole within this long of the connection's
    /// opening or of the previous answer on it, however often bytes trickle in; a slower connection is closed.
    public var requestHeadTimeoutSeconds: Int = 10
    /// A request's body must be in whole within `requestHeadTimeoutSeconds` of its head plus its length (chunked:
    /// the most it may be) at this rate, however often bytes trickle in; a slower one is refused with
    /// `HTTPRejection.bodyTooSlow` and its connection closed. 32 KiB/s brings an import's 32 MiB in 17 minutes.
    public var minimumBodyBytesPerSecond: Int = 32 * 1024
    /// What the bodies of all requests in flight may hold together: a body that would take more is refused
    /// with `HTTPRejection.busy`, so memory stays bounded whatever the number of connections.
    public var maxBodyBytesInFlight: Int = 128 << 20
    /// What the answers queued and not yet sent may hold together: an answer that would take more is replaced by
    /// `HTTPRejection.answersBusy`. An answer is held from its handler's end until it is sent or its connection
    /// closes (after `connectionTimeoutSeconds` without progress), so clients that ask for large answers and never
    /// read them hold no more than this, whatever their number. Ten catalog pages of the usual 24 MB.
    public var maxAnswerBytesInFlight: Int = 256 << 20
    /// Per connection, for the request line, headers and read buffer: a longer request line gets 414, longer
    /// headers 431 (MHD answers both). MHD's own default, four times nginx's largest header buffer; MHD zeroes
    /// all of it after each request, which at 128 KiB cost a cheap request 4 % of the server's CPU.
    public var memoryPerConnection: Int = 32 * 1024
    /// A request target with more query parameters is refused with `HTTPRejection.tooManyQueryParameters`. At
    /// most `memoryPerConnection / 256`: MHD takes 64 bytes of the connection's memory per parameter, and past
    /// what it has (a few hundred parameters in 32 KiB) it answers nothing.
    public var maxQueryParameters: Int = 100

    public init() {}
}

/// Why a server did not start.
public enum HTTPServerError: Error, CustomStringConvertible, Equatable {
    /// `host` is not an address or a name this machine resolves.
    case invalidHost(String, detail: String)
    /// libmicrohttpd could not start, e.g. because the port is taken.
    case couldNotStart(host: String, port: UInt16, detail: String)

    public var description: String {
        switch self {
        case .invalidHost(let host, let detail):
            "cannot listen on host '\(host)': \(detail); use an address such as 127.0.0.1, 0.0.0.0 or ::1"
        case .couldNotStart(let host, let port, let detail):
            "cannot listen on \(host):\(port): \(detail); check that no other process uses the port "
                + "(or choose another) and that the address belongs to this machine"
        }
    }
}
