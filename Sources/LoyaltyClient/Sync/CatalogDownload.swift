import Foundation
import HTTPClient
import LoyaltyAPI
import Synchronization

/// The answers of one catalog pull, in order, each downloaded on a thread of its own while the caller
/// decodes and stores the page before: the request for page k+1 goes out as soon as page k's
/// `Link: rel="next"` arrives, so the server builds it meanwhile. At most one answer waits to be
/// taken, so memory stays that of a few pages whatever the catalog's size.
final class CatalogDownload: Sendable {
    /// One answer, with the cursor it was asked with (the caller checks that it is the cursor of the
    /// page before).
    struct Answer: Sendable {
        var since: String?
        var response: HTTPClientResponse
        /// A 2xx answer's body (the response's own is empty then).
        var body: PageFile
    }

    private enum Item: Sendable {
        case answer(Answer)
        case failure(ClientError)
    }

    private let queue = Mutex<[Item]>([])
    /// Signalled for each item queued, and once more when the thread has nothing left to queue.
    private let queued = DispatchSemaphore(value: 0)
    /// Room for one answer ahead of the caller.
    /// Made at 0 and signalled once in `init`: libdispatch traps when a semaphore is freed below the value it was
    /// made with, as a pull stopped midway (a page refused) leaves this one.
    private let room = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts downloading at `since` (nil: the whole catalog), on a connection of its own that `like` would
    /// open (its server, timeouts, CA file and cancellation).
    init(
        like caller: LoyaltyAPIClient, since: String?, etag: String?, area: CatalogArea?, limit: Int?,
        _ credential: Credential
    ) {
        let (server, timeouts, caFile, isCancelled) = (caller.server, caller.timeouts, caller.caFile, caller.isCancelled)
        room.signal()
        Thread { [self] in
            let api = LoyaltyAPIClient(server: server, timeouts: timeouts, caFile: caFile)
            api.isCancelled = isCancelled
            var since = since
            var etag = etag
            while true {
                room.wait()
                if cancelled.load(ordering: .acquiring) { break }
                let item: Item
                do throws(ClientError) {
                    let body = try PageFile()
                    item = .answer(
                        Answer(
                            since: since,
                            response: try api.catalogResponse(
                                since: since, etag: etag, area: area, limit: limit, credential,
                                into: body.descriptor),
                            body: body))
                } catch {
                    item = .failure(error)
                }
                queue.withLock { $0.append(item) }
                queued.signal()
                guard case .answer(let answer) = item, answer.response.status == 200,
                    let next = Self.nextCursor(answer.response.header("Link"))
                else { break }
                since = next
                etag = nil
            }
            queued.signal()
            finished.signal()
        }.start()
    }

    /// The next answer; nil when the thread has stopped (after an answer without a next page, or a
    /// failure, which is thrown first).
    func next() throws(ClientError) -> Answer? {
        queued.wait()
        guard let item = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            queued.signal()  // Stays answered for a repeated call.
            return nil
        }
        room.signal()
        switch item {
        case .answer(let answer): return answer
        case .failure(let error): throw error
        }
    }

    /// Stops the thread (after the request it may be making) and waits for it.
    func close() {
        cancelled.store(true, ordering: .releasing)
        room.signal()
        finished.wait()
    }

    /// The `since` of a `Link: <...>; rel="next"` target (RFC 8288), as the server writes it.
    static func nextCursor(_ link: String?) -> String? {
        guard let link,
            let value = link.split(separator: ",").first(where: { $0.contains("rel=\"next\"") }),
            let open = value.firstIndex(of: "<"), let close = value.firstIndex(of: ">"), open < close,
            let target = URLComponents(string: String(value[value.index(after: open)..<close]))
        else { return nil }
        return target.queryItems?.first(where: { $0.name == "since" })?.value
    }
}

/// A catalog page's body in an unlinked temporary file: the download writes it there, and it is read through a
/// mapping whose pages are let go behind the reader, so that a page costs this process a few MiB whatever its size
/// (a hostile server's page is cut off at what a page can be, some 121 MB).
final class PageFile: Sendable {
    let descriptor: Int32

    init() throws(ClientError) {
        let directory = FileManager.default.temporaryDirectory.path
        var path = Array("\(directory)/loyalty-page-XXXXXX".utf8CString)
        descriptor = path.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw .io("cannot make a temporary file in \(directory) for a catalog page: \(String(cString: strerror(errno)))")
        }
        _ = path.withUnsafeBufferPointer { unlink($0.baseAddress!) }
    }

    deinit { close(descriptor) }

    /// The file's bytes, mapped, and the function that lets those before an offset go.
    func withBytes<T>(
        _ body: (UnsafeBufferPointer<UInt8>, _ release: @escaping (Int) -> Void) throws(ClientError) -> T
    ) throws(ClientError) -> T {
        let size = Int(lseek(descriptor, 0, SEEK_END))
        guard size > 0 else { return try body(UnsafeBufferPointer(start: nil, count: 0)) { _ in } }
        let base: UnsafeMutableRawPointer? = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let base, base != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw .io("cannot map a catalog page's temporary file: \(String(cString: strerror(errno)))")
        }
        defer { munmap(base, size) }
        let pageSize = Int(getpagesize())
        return try body(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: size)) { offset in
            _ = madvise(base, offset / pageSize * pageSize, MADV_DONTNEED)
        }
    }
}
