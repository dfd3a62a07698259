import Foundation
import LoyaltyAPI
import SQLite

/// The client's SQLite cache: the catalog copy, the account's seen set, the outbox of seen items not
/// yet acknowledged by the server, redemptions with their idempotency keys, and sync state.
///
/// Every state change is one transaction, so a process killed at any point leaves the file as it was
/// before or after the change. Outbox rows are deleted only after the server acknowledged them;
/// pushing one twice is harmless (the server's seen set is a union).
public final class OfferCache {
    public let file: URL
    private let database: SQLiteDatabase

    /// SQLite's files beside the cache, which hold what it holds.
    static let journalSuffixes = ["-wal", "-shm", "-journal"]
    /// What `discard` renames a damaged cache to, after its name.
    static let setAsideSuffix = ".corrupt"

    /// Opens (creating and migrating) the cache at `file`.
    public init(file: URL) throws(ClientError) {
        self.file = file
        try StateFile.makeDirectory(file.deletingLastPathComponent())
        // It holds unspent till codes: made 0600 here, since SQLite would make it 0644 (its journals take
        // the database's mode). If it cannot be made, SQLite's open says why.
        let made = open(file.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if made >= 0 { close(made) }
        do {
            database = try SQLiteDatabase(path: file.path)
        } catch {
            throw Self.clientError(error, file: file)
        }
        try migrate()
    }

    /// Moves a damaged cache aside (`cache.sqlite.corrupt`) and starts an empty one; what it held comes
    /// back from the server at the next full sync.
    public static func discard(file: URL) throws(ClientError) {
        for suffix in journalSuffixes {
            try StateFile.remove(URL(fileURLWithPath: file.path + suffix))
        }
        if FileManager.default.fileExists(atPath: file.path),
            rename(file.path, file.path + setAsideSuffix) != 0
        {
            throw .io("cannot move the damaged cache \(file.path) aside: remove it by hand")
        }
    }

    // MARK: plumbing

    func read<T>(_ body: (SQLiteDatabase) throws -> T) throws(ClientError) -> T {
        do {
            return try body(database)
        } catch {
            throw Self.clientError(error, file: file)
        }
    }

    @discardableResult
    func write<T>(_ body: (SQLiteDatabase) throws -> T) throws(ClientError) -> T {
        do {
            return try database.transaction { try body(database) }
        } catch {
            throw Self.clientError(error, file: file)
        }
    }

    static func clientError(_ error: any Error, file: URL) -> ClientError {
        if let error = error as? ClientError { return error }
        if case .corrupt = error as? SQLiteError {
            return .corruptCache(path: file.path, newerSchema: nil)
        }
        return .io("the cache \(file.path) failed: \(error)")
    }
}

extension SQLiteValue {
static func optionalText(_ value: String?) -> SQLiteValue {
        value.map { .text($0) } ?? .null
    }
static func optionalInteger(_ value: Int?) -> SQLiteValue {
        value.map { .integer(Int64($0)) } ?? .null
    }
static func optionalDate(_ value: Date?) -> SQLiteValue {
        value.map { .real($0.timeIntervalSince1970) } ?? .null
    }
}

/// Typed reads of the cache's own rows; a value of the wrong type means the file was tampered with.
extension SQLiteRow {
func text(_ index: Int) throws(SQLiteError) -> String {
        guard let value = self[index].text else { throw mismatch(index) }
        return value
    }

func integer(_ index: Int) throws(SQLiteError) -> Int64 {
        guard let value = self[index].integer else { throw mismatch(index) }
        return value
    }

func real(_ index: Int) throws(SQLiteError) -> Double {
        guard let value = self[index].real else { throw mismatch(index) }
        return value
    }

func uuid(_ index: Int) throws(SQLiteError) -> UUID {
        guard let value = self[index].text.flatMap(UUID.init(uuidString:)) else {
            throw mismatch(index)
        }
        return value
    }

func optionalText(_ index: Int) -> String? { self[index].text }
func optionalInteger(_ index: Int) -> Int64? { self[index].integer }
func optionalDate(_ index: Int) -> Date? {
        self[index].real.map(Date.init(timeIntervalSince1970:))
    }

    private func mismatch(_ index: Int) -> SQLiteError {
        .failed(code: 20, message: "unexpected value in column \(index)", sql: "")  // SQLITE_MISMATCH
    }
}
