import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres

/// Secure beacons: identity keys sealed under the server key, never stored in plaintext, and each beacon's clock.
extension Database {
    /// Makes the retailer's (major, minor) secure with a new random identity key (the Eddystone-EID spec's
    /// shared-key configuration), replacing the key it had: the provisioning document, the one time the key is shown.
    func secureBeacon(
        retailer: Retailer, major: UInt16, minor: UInt16, exponent: UInt8, form: SecureBeaconForm,
        keyring: BeaconKeyring
    ) throws -> BeaconProvisioning {
        let identityKey = Secrets.randomBytes(16)
        let (keyID, sealed) = try keyring.seal(
            identityKey, binding: SecureBeacon.binding(retailerID: retailer.id, major: major, minor: minor))
        // A whole second: the document states the moment at which the counter had its value.
        let counterAt = Date(timeIntervalSince1970: clock().timeIntervalSince1970.rounded(.down))
        try pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.query(
                    """
                    INSERT INTO secure_beacons (retailer_id, major, minor, exponent, form, key_id, sealed_key,
                        counter_origin, counter_at)
                    VALUES (\(retailer.id), \(Int(major)), \(Int(minor)), \(Int(exponent)), \(form.rawValue), \(keyID),
                        \(sealed), \(SecureBeacon.initialCounter), \(counterAt))
                    ON CONFLICT (retailer_id, major, minor) DO UPDATE SET
                        exponent = excluded.exponent, form = excluded.form, key_id = excluded.key_id,
                        sealed_key = excluded.sealed_key, counter_origin = excluded.counter_origin,
                        counter_at = excluded.counter_at
                    """
                )
                // The beacon's offers take new versions (the feed's trigger fires on an UPDATE naming title), so
                // the catalog brings devices their presence_required at the next sync.
                try connection.query(
                    """
                    UPDATE offers SET title = title
                    WHERE retailer_id = \(retailer.id) AND major = \(Int(major)) AND minor = \(Int(minor))
                        AND deleted_at IS NULL
                    """)
            }
        }
        return BeaconProvisioning(
            major: major, minor: minor, identityKey: Hex.text(identityKey), exponent: exponent, form: form,
            uuid: retailer.uuid, counter: UInt32(SecureBeacon.initialCounter), counterAt: counterAt)
    }

    /// Seals anew under the keyring's current key every identity key sealed under an older one: a start after the
    /// operator put a new key first in the key file. Throws when a row's key is not in the keyring at all.
    func resealBeaconKeys(keyring: BeaconKeyring) throws -> Int {
        try pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT retailer_id, major, minor, key_id, sealed_key FROM secure_beacons
                WHERE key_id <> \(keyring.current.id)
                """
            )
            var resealed = 0
            for row in rows {
                let retailerID: UUID = try row.decode("retailer_id")
                let major = UInt16(try row.decode("major", as: Int.self))
                let minor = UInt16(try row.decode("minor", as: Int.self))
                let oldKeyID: String = try row.decode("key_id")
                let binding = SecureBeacon.binding(retailerID: retailerID, major: major, minor: minor)
                guard
                    let identityKey = try keyring.open(
                        try row.decode("sealed_key"), keyID: oldKeyID, binding: binding)
                else { throw BeaconKeyring.FileError(description: "no key \(oldKeyID) in the beacon key file: it "
                    + "sealed the identity keys of secure beacons; put it back below the current key") }
                let (keyID, sealed) = try keyring.seal(identityKey, binding: binding)
                // Only if no one provisioned the beacon anew meanwhile.
                resealed += try connection.query(
                    """
                    UPDATE secure_beacons SET key_id = \(keyID), sealed_key = \(sealed)
                    WHERE retailer_id = \(retailerID) AND major = \(Int(major)) AND minor = \(Int(minor))
                        AND key_id = \(oldKeyID)
                    """
                ).rowsAffected
            }
            return resealed
        }
    }

    /// Every secure beacon, its identity key opened: what the resolver's table is built from. A row whose key is not
    /// in the keyring cannot be: the start refused such a key file.
    func secureBeacons(keyring: BeaconKeyring) throws -> [SecureBeacon] {
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT b.retailer_id, r.name, r.uuid, b.major, b.minor, b.exponent, b.form, b.key_id, b.sealed_key,
                    b.counter_origin, b.counter_at
                FROM secure_beacons b JOIN retailers r ON r.id = b.retailer_id
                """
            )
        }
        return try rows.compactMap { row in
            let retailerID: UUID = try row.decode("retailer_id")
            let major = UInt16(try row.decode("major", as: Int.self))
            let minor = UInt16(try row.decode("minor", as: Int.self))
            guard
                let identityKey = try keyring.open(
                    try row.decode("sealed_key"), keyID: try row.decode("key_id"),
                    binding: SecureBeacon.binding(retailerID: retailerID, major: major, minor: minor)),
                let form = SecureBeaconForm(rawValue: try row.decode("form"))
            else { return nil }
            return SecureBeacon(
                retailerID: retailerID, retailerName: try row.decode("name"), uuid: try row.decode("uuid"),
                major: major, minor: minor, exponent: UInt8(try row.decode("exponent", as: Int.self)), form: form,
                identityKey: identityKey, counterOrigin: try row.decode("counter_origin"),
                counterAt: try row.decode("counter_at"))
        }
    }

    /// Records the account's resolved sightings; a window already recorded keeps its latest time.
    func recordSightings(_ sightings: [(window: SecureBeaconTable.Window, heardAt: Date)], accountID: UUID) throws {
        // One row per window: an INSERT may not update the same row twice.
        var latest: [String: (window: SecureBeaconTable.Window, heardAt: Date)] = [:]
        for sighting in sightings {
            let beacon = sighting.window.beacon
            let key = "\(beacon.retailerID) \(beacon.major) \(beacon.minor) \(sighting.window.counter)"
            if let kept = latest[key], kept.heardAt >= sighting.heardAt { continue }
            latest[key] = sighting
        }
        let windows = Array(latest.values)
        guard !windows.isEmpty else { return }
        let now = clock()
        try pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO verified_sightings (account_id, retailer_id, major, minor, window_counter, heard_at)
                SELECT \(accountID), s.retailer_id, s.major, s.minor, s.window_counter, least(s.heard_at, \(now))
                FROM unnest(\(uuidArray(windows.map(\.window.beacon.retailerID)))::uuid[],
                    \(textArray(windows.map { String($0.window.beacon.major) }))::integer[],
                    \(textArray(windows.map { String($0.window.beacon.minor) }))::integer[],
                    \(textArray(windows.map { String($0.window.counter) }))::bigint[],
                    \(textArray(windows.map { LoyaltyJSON.formatTimestamp($0.heardAt) }))::timestamptz[])
                    AS s (retailer_id, major, minor, window_counter, heard_at)
                ON CONFLICT (account_id, retailer_id, major, minor, window_counter) DO UPDATE SET
                    heard_at = greatest(verified_sightings.heard_at, excluded.heard_at)
                """
            )
        }
    }
}

