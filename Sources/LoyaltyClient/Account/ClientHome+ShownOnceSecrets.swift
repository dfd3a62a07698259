import Foundation
import JSONCoding
import LoyaltyAPI
import SystemCalls

/// Secrets the server shows once (a retailer's API key, a device's token) have only the state folder to go
/// to. So a command that will receive one checks first that the folder can be written, before anything is
/// asked of the server; and if saving still fails, its error shows the secret and says where to put it.
extension ClientHome {
    /// Fails unless both state folders can be created and written to (a file created and removed in each).
    public func checkWritable() throws(ClientError) {
        for directory in Set([configDirectory, dataDirectory]) {
            do throws(ClientError) {
                try StateFile.makeDirectory(directory)
                let probe = directory.appendingPathComponent(".write-check-\(getpid())")
                let fd = open(probe.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw ClientError.io(errorText()) }
                close(fd)
                unlink(probe.path)
            } catch {
                throw .io(
                    "cannot write in \(directory.path) (\(error.message ?? "")): make it writable, or set LOYALTY_HOME to a folder that is; nothing was asked of the server"
                )
            }
        }
    }

    /// Saves `config`, which holds a retailer key just shown by the server; on failure the error carries
    /// the key. `oldKeyStillWorks`: after a rotation, the previous key works until the new one is used.
    public func saveNewRetailerKey(_ config: ClientConfig, oldKeyStillWorks: Bool) throws(ClientError) {
        do {
            try saveConfig(config)
        } catch {
            let key = config.retailer?.credentials.apiKey ?? ""
            throw .io(
                "\(error.message ?? ""). The server will not show this API key again, so keep it now: \(key) — use it with LOYALTY_RETAILER_KEY=\(key), or put it in \(configFile.path) as retailer.api_key once the folder is writable"
                    + (oldKeyStillWorks ? "; the old key keeps working until the new one is first used, 24 h at most" : "")
            )
        }
    }

    /// Saves the credentials of a device the server just made; on failure the error carries them.
    public func saveNewDevice(_ device: Issued<DeviceCredentials>) throws(ClientError) {
        do {
            try saveDevice(device)
        } catch {
            let json = (try? LoyaltyJSON.encoder().encode(device)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw .io(
                "\(error.message ?? ""). The server will not show this device's token again, so keep it now: once the folder is writable, write \(json) to \(deviceFile.path) (mode 0600)"
            )
        }
    }
}
