import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient
import SystemCalls

// `loyalty account export` and `loyalty account delete`: the shopper's own data (docs/PRIVACY.md).

private let exportFile = Option<String>(
    "output", value: "FILE",
    help: "Write the export to FILE (mode 0600, replaced whole when done) instead of to standard output.")
private let deleteYes = Flag("yes", help: "Delete without asking (needed when standard input is not a terminal).")

let accountExport = Command(
    name: "export",
    summary: "Write everything the service holds about this account as one JSON document.",
    discussion: """
        The document holds the account, its devices (name, when linked and revoked), its link codes, every
        redemption with its acceptance at the till, every offer seen (which, where, when) and every verified
        sighting of a secure beacon. It is written a page at a time, so any size of account exports in little
        memory. With --output FILE, a line (text, or JSON with --json) says what was written.

        \(clientDiscussion)
        """,
    options: [exportFile] + ClientOptions.all,
    run: clientCommand { context in
        let credential = try context.deviceCredential().1
        guard let path = context.arguments.value(exportFile) else {
            _ = try context.home.exportAccount(context.api, credential) { bytes throws(ClientError) in
                context.output.write(bytes: bytes)
            }
            return
        }
        let file = try ExportFile(path)
        let head: AccountExport
        do {
            head = try context.home.exportAccount(context.api, credential) { bytes throws(ClientError) in
                try file.write(bytes)
            }
            try file.finish()
        } catch {
            file.abandon()
            throw error
        }
        context.output.emit(
            text: ClientText.accountExported(head, path: path), json: ClientJSONLines.accountExported(head, path: path))
    })

let accountDelete = Command(
    name: "delete",
    summary: "Delete this account and everything the service holds about it, then forget it here.",
    discussion: """
        Deletes, at once and for good: every device of the account (each token stops working), the offers
        seen, the verified sightings, the link codes. Redemptions stay only as anonymous counts in the
        retailers' figures and limits; a code not yet used at a till no longer works. Once the service has
        confirmed, this device's token and cache are removed. Asks first on a terminal; elsewhere it needs
        --yes. Run `loyalty account export` first to keep a copy.

        \(clientDiscussion)
        """,
    options: [deleteYes] + ClientOptions.all,
    run: clientCommand { context in
        let (device, credential) = try context.deviceCredential()
        if !context.arguments.flag(deleteYes) { try confirmDeletingAccount(device.accountID, context) }
        let deletion = try context.home.deleteAccount(context.api, credential)
        context.output.emit(
            text: ClientText.accountDeleted(device.accountID, deletion),
            json: ClientJSONLines.accountDeleted(device.accountID, deletion))
    })

/// A deletion cannot be undone: a terminal is asked, anything else needs --yes.
private func confirmDeletingAccount(_ accountID: UUID, _ context: ClientContext) throws {
    let consequence =
        "the account \(accountID.uuidString.lowercased()), its devices, seen offers and sightings are deleted for good"
    guard isatty(STDIN_FILENO) == 1 else {
        throw context.arguments.usageError(
            "standard input is not a terminal, so nothing can be asked: add --yes to delete the account (\(consequence))")
    }
    context.output.error("delete this account? \(consequence) [y/N] ", newline: false)
    guard readLine()?.lowercased().hasPrefix("y") == true else {
        context.output.error("not deleted")
        throw SilentExit(code: ExitCode.failure)
    }
}

/// The export's file: written beside FILE (mode 0600: it is personal data) and renamed over it when whole, so a
/// failed export leaves no half document under the name.
private final class ExportFile: Sendable {
    let path: String
    let temporary: String
    let descriptor: Int32

    init(_ path: String) throws {
        self.path = path
        temporary = path + ".tmp-\(getpid())"
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CommandFailure("cannot write \(temporary): \(errorText())", exitCode: ExitCode.ioError)
        }
    }

    func write(_ bytes: [UInt8]) throws(ClientError) {
        do {
            try writeAll(bytes, to: descriptor)
        } catch {
            throw .io("cannot write \(temporary): \(error.description)")
        }
    }

    func finish() throws(ClientError) {
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else { throw .io("cannot write \(path): \(errorText())") }
    }

    func abandon() {
        close(descriptor)
        unlink(temporary)
    }
}
