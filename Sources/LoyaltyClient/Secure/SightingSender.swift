import Foundation
import LoyaltyAPI

/// Sends batches of sightings to `POST /v1/sightings` on a thread and a connection of its own, so a scan hands
/// over what it heard and goes on: it collects the answers at its next event (`answers`), or, replaying a capture
/// (no radio to miss), waits for them (`waitForAnswers`).
public final class SightingSender: @unchecked Sendable {
    /// A batch as it was sent: each sighting with the identity it names and, for one from the queue, its place there.
    public struct Batch: Sendable {
        public var sightings: [Sighting]
        public var identities: [SecureIdentity]
        public var queueIDs: [Int64?]
    }

    public enum Answer: Sendable {
        case resolved(Batch, SightingResolution)
        case failed(Batch, ClientError)
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var waiting: [Batch] = []
    private var answered: [Answer] = []
    private var inFlight = 0
    private var closed = false
    private var started = false
    private let send: @Sendable (Batch) -> Answer

    /// Sends through a connection of its own that `like` would open (its server, timeouts, CA file, cancellation).
    public convenience init(like caller: LoyaltyAPIClient, credential: Credential) {
        let (server, timeouts, caFile, isCancelled) = (caller.server, caller.timeouts, caller.caFile, caller.isCancelled)
        let api = LoyaltyAPIClient(server: server, timeouts: timeouts, caFile: caFile)
        api.isCancelled = isCancelled
        // The API client is used by the sending thread alone.
        nonisolated(unsafe) let confined = api
        self.init { batch in
            do throws(ClientError) {
                return .resolved(batch, try confined.resolveSightings(batch.sightings, credential))
            } catch {
                return .failed(batch, error)
            }
        }
    }

    /// `send` answers one batch; it runs on the sender's thread.
    private init(send: @escaping @Sendable (Batch) -> Answer) {
        self.send = send
    }

    /// Hands `batch` to the sending thread (started on the first batch).
    public func submit(_ batch: Batch) {
        condition.lock()
        defer { condition.unlock() }
        waiting.append(batch)
        inFlight += 1
        condition.broadcast()
        if !started {
            started = true
            Thread { [self] in run() }.start()
        }
    }

    /// Whether a batch is waiting or being sent.
    public var isBusy: Bool {
        condition.lock()
        defer { condition.unlock() }
        return inFlight > 0
    }

    /// The answers that came since the last call; never waits.
    public func answers() -> [Answer] {
        condition.lock()
        defer { condition.unlock() }
        let taken = answered
        answered = []
        return taken
    }

    /// Waits until every batch handed over was answered, and returns the answers.
    public func waitForAnswers() -> [Answer] {
        condition.lock()
        defer { condition.unlock() }
        while inFlight > 0 { condition.wait() }
        let taken = answered
        answered = []
        return taken
    }

    /// Ends the sending thread once what it holds is sent.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while waiting.isEmpty && !closed { condition.wait() }
            if waiting.isEmpty {
                condition.unlock()
                return
            }
            let batch = waiting.removeFirst()
            condition.unlock()
            let answer = send(batch)
            condition.lock()
            answered.append(answer)
            inFlight -= 1
            condition.broadcast()
            condition.unlock()
        }
    }
}
