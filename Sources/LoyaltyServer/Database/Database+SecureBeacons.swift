import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres
import Synchronization

/// Secure beacons: identity keys sealed under the server key, never stored in plaintext, and each beacon's clock.
extension Database {
    /// Makes the retailer's (major, minor) secure with a new random identity key (the Eddystone-EID spec's
    /// shared-key configuration), replacing the key it had: the provisioning document, the one time the key is shown.
    func secureBeacon(
        retailer: Retailer, major: UInt16, minor: UInt16, exponent: UInt8, form: SecureBeaconForm,
        keyring: BeaconKeyring
    ) throws -> BeaconProvisioning {
        let identityKey = Secrets.randomBytes(16)
        // A whole second: the document states the moment at which the counter had its value.
        let counterAt = Date(timeIntervalSince1970: clock().timeIntervalSince1970.rounded(.down))
        try saveSecureBeacon(
            retailerID: retailer.id, major: major, minor: minor, exponent: exponent, form: form,
            identityKey: identityKey, counter: SecureBeacon.initialCounter, at: counterAt, keyring: keyring)
        return BeaconProvisioning(
            major: major, minor: minor, identityKey: Hex.text(identityKey), exponent: exponent, form: form,
            uuid: retailer.uuid, counter: UInt32(SecureBeacon.initialCounter), counterAt: counterAt)
    }

    /// Makes the retailer's (major, minor) secure with `identityKey` (sealed), its clock `counter` at `counterAt`,
    /// replacing the key it had.
    func saveSecureBeacon(
        retailerID: UUID, major: UInt16, minor: UInt16, exponent: UInt8, form: SecureBeaconForm, identityKey: [UInt8],
        counter: Int64, at counterAt: Date, keyring: BeaconKeyring
    ) throws {
        let (keyID, sealed) = try keyring.seal(
            identityKey, binding: SecureBeacon.binding(retailerID: retailerID, major: major, minor: minor))
        try pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.query(
                    """
                    INSERT INTO secure_beacons (retailer_id, major, minor, exponent, form, key_id, sealed_key,
                        counter_origin, counter_at)
                    VALUES (\(retailerID), \(Int(major)), \(Int(minor)), \(Int(exponent)), \(form.rawValue), \(keyID),
                        \(sealed), \(counter), \(counterAt))
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
                    WHERE retailer_id = \(retailerID) AND major = \(Int(major)) AND minor = \(Int(minor))
                        AND deleted_at IS NULL
                    """)
            }
        }
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
    /// in the keyring cannot be: the start refused such a key file. The keys are opened on every core: 100,000 of them
    /// are most of a load's time.
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
        var sealedKeys: [(sealed: [UInt8], keyID: String)] = []
        sealedKeys.reserveCapacity(rows.count)
        let unopened = try rows.compactMap { row -> SecureBeacon? in
            let retailerID: UUID = try row.decode("retailer_id")
            let major = UInt16(try row.decode("major", as: Int.self))
            let minor = UInt16(try row.decode("minor", as: Int.self))
            guard let form = SecureBeaconForm(rawValue: try row.decode("form")) else { return nil }
            sealedKeys.append((try row.decode("sealed_key"), try row.decode("key_id")))
            return SecureBeacon(
                retailerID: retailerID, retailerName: try row.decode("name"), uuid: try row.decode("uuid"),
                major: major, minor: minor, exponent: UInt8(try row.decode("exponent", as: Int.self)), form: form,
                identityKey: [], counterOrigin: try row.decode("counter_origin"),
                counterAt: try row.decode("counter_at"))
        }
        // A key that does not open (a tampered row) fails the load, as it did when they were opened one by one.
        let sealed = sealedKeys
        let opened = Mutex([Result<[UInt8]?, any Error>](repeating: .success(nil), count: unopened.count))
        let chunks = max(1, min(unopened.count / 1_000, 4 * ProcessInfo.processInfo.activeProcessorCount))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = (unopened.count * chunk / chunks)..<(unopened.count * (chunk + 1) / chunks)
            let keys = range.map { index in
                let beacon = unopened[index]
                return Result {
                    try keyring.open(
                        sealed[index].sealed, keyID: sealed[index].keyID,
                        binding: SecureBeacon.binding(
                            retailerID: beacon.retailerID, major: beacon.major, minor: beacon.minor))
                }
            }
            opened.withLock { $0.replaceSubrange(range, with: keys) }
        }
        return try opened.withLock { keys in
            try zip(unopened, keys).compactMap { beacon, key in
                guard let key = try key.get() else { return nil }
                var beacon = beacon
                beacon.identityKey = key
                return beacon
            }
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
        _ = try pool.withConnection { connection in
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


extension Database {
    /// Keeps, per beacon, the latest Eddystone-TLM a resolved sighting carried (the fleet page's battery, temperature
    /// and uptime); an older one than what is kept changes nothing.
    func recordTelemetry(_ readings: [(beacon: SecureBeacon, heardAt: Date, telemetry: SightingTelemetry)]) throws {
        var latest: [String: (beacon: SecureBeacon, heardAt: Date, telemetry: SightingTelemetry)] = [:]
        for reading in readings {
            let key = "\(reading.beacon.retailerID) \(reading.beacon.major) \(reading.beacon.minor)"
            if let kept = latest[key], kept.heardAt >= reading.heardAt { continue }
            latest[key] = reading
        }
        guard !latest.isEmpty else { return }
        let now = clock()
        try pool.withConnection { connection in
            for reading in latest.values {
                let tlm = reading.telemetry
                // Battery 0 is the frame's "not measured".
                let battery = tlm.batteryMillivolts.flatMap { $0 == 0 ? nil : $0 }
                try connection.query(
                    """
                    INSERT INTO beacon_telemetry (retailer_id, major, minor, battery_mv, temperature,
                        advertising_count, uptime_seconds, heard_at)
                    VALUES (\(reading.beacon.retailerID), \(Int(reading.beacon.major)), \(Int(reading.beacon.minor)),
                        \(battery), \(tlm.temperature), \(tlm.advertisingCount), \(tlm.uptimeSeconds),
                        least(\(reading.heardAt)::timestamptz, \(now)::timestamptz))
                    ON CONFLICT (retailer_id, major, minor) DO UPDATE SET
                        battery_mv = excluded.battery_mv, temperature = excluded.temperature,
                        advertising_count = excluded.advertising_count, uptime_seconds = excluded.uptime_seconds,
                        heard_at = excluded.heard_at
                    WHERE beacon_telemetry.heard_at <= excluded.heard_at
                    """
                )
            }
        }
    }
}
