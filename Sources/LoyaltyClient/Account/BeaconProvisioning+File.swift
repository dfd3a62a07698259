import Foundation
import JSONCoding
import LoyaltyAPI

extension BeaconProvisioning {
    /// Writes the document to `file`, mode 0600 from its creation on: it holds the beacon's identity key, which the
    /// server will not show again.
    public func write(to file: URL) throws(ClientError) {
        let data: Data
        do {
            let encoder = LoyaltyJSON.encoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            data = try encoder.encode(self) + Data("\n".utf8)
        } catch {
            throw .io("cannot encode the provisioning document: \(error)")
        }
        try StateFile.write(data, to: file, mode: 0o600)
    }
}
