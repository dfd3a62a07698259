import Foundation
import LoyaltyAPI

extension ClientHome {
    /// `loyalty account create`: an anonymous account with this device in it, its token saved here. A device
    /// that already has an account keeps it.
    public func createAccount(_ api: LoyaltyAPIClient, deviceName: String?) throws(ClientError) -> DeviceCredentials {
        if let existing = try loadDevice() {
            throw .alreadyInAccount(existing.credentials.accountID, linking: false)
        }
        try checkWritable()
        try prepareCacheForNewAccount()
        return try joined(try api.createAccount(deviceName: deviceName), on: api)
    }

    /// `loyalty account link CODE`: this device joins the account that made the code. With `replacing`, a
    /// device that has an account (a revoked one, say) leaves it for the new one.
    public func linkDevice(
        _ api: LoyaltyAPIClient, code: String, deviceName: String?, replacing: Bool = false
    ) throws(ClientError) -> DeviceCredentials {
        if !replacing, let existing = try loadDevice() {
            throw .alreadyInAccount(existing.credentials.accountID, linking: true)
        }
        try checkWritable()
        try prepareCacheForNewAccount()
        return try joined(try api.linkDevice(code: code, deviceName: deviceName), on: api)
    }

    /// Before the server is asked: the cache is made (or opened) and the cursors of any earlier account are
    /// forgotten, so a cache that cannot be written (a full disk) stops the command with no account made. Done
    /// after, the account and its saved token were reported as a cache error. A link that then fails costs
    /// only a full sync; a kept cursor of another account would skip this one's seen set.
    private func prepareCacheForNewAccount() throws(ClientError) {
        do {
            try OfferCache(file: cacheFile).forgetCursors()
        } catch .io(let problem) {
            throw .io("\(problem); nothing was asked of the server: make room in \(dataDirectory.path), then run it again")
        }
    }

    /// Saves the new device's token with its issuer (or shows it, if that fails) and the server its account
    /// lives on, which later commands then use.
    private func joined(_ device: DeviceCredentials, on api: LoyaltyAPIClient) throws(ClientError) -> DeviceCredentials {
        try saveNewDevice(Issued(device, issuer: api.origin))
        try rememberServer(api)
        return device
    }

    /// Keeps `api`'s server in the config file.
    private func rememberServer(_ api: LoyaltyAPIClient) throws(ClientError) {
        var config = try loadConfig()
        config.server = api.server.absoluteString
        try saveConfig(config)
    }

    /// `loyalty retailer register`: registers with the operator's token and keeps the retailer's key in the
    /// config file. Registering again would overwrite the only copy of a key, so a config holding one refuses.
    public func registerRetailer(
        _ api: LoyaltyAPIClient, _ registration: RetailerRegistration, operatorToken: String?
    ) throws(ClientError) -> RetailerCredentials {
        var config = try loadConfig()
        if let existing = config.retailer {
            throw .configuration(
                "\(configFile.path) already holds the key of \(existing.credentials.name): register from another LOYALTY_HOME")
        }
        guard let token = operatorToken, !token.isEmpty else {
            throw .notRegistered(.operatorToken)
        }
        try checkWritable()
        let credentials = try api.registerRetailer(registration, .operator(token))
        config.retailer = Issued(credentials, issuer: api.origin)
        config.server = api.server.absoluteString
        try saveNewRetailerKey(config, oldKeyStillWorks: false)
        return credentials
    }

    /// `loyalty retailer rotate-key`: the new key, and whether it was saved in the config file (it is not
    /// when the key came from LOYALTY_RETAILER_KEY: then the new one is shown once).
    public func rotateRetailerKey(_ api: LoyaltyAPIClient, environment: [String: String]) throws(ClientError)
        -> (key: String, saved: Bool)
    {
        var config = try loadConfig()
        let credential = try config.retailerCredential(environment: environment, sendingTo: api.server)
        if config.retailer != nil { try checkWritable() }
        let key = try api.rotateKey(credential)
        guard config.retailer != nil else { return (key.apiKey, false) }
        config.retailer?.credentials.apiKey = key.apiKey
        try saveNewRetailerKey(config, oldKeyStillWorks: true)
        return (key.apiKey, true)
    }
}

extension ClientHome {
    /// `loyalty retailer key set`: keeps `key` (one rotated in the console, say) in the config file once the
    /// server says whose it is, with that server. A config holding another retailer's key refuses: it may be
    /// the only copy.
    public func setRetailerKey(_ api: LoyaltyAPIClient, key: String) throws(ClientError) -> RetailerCredentials {
        guard ClientConfig.isKeyShaped(key) else {
            throw .configuration("that is not an API key: a key has no spaces, line breaks or other control characters")
        }
        var config = try loadConfig()
        try checkWritable()
        let retailer = try api.retailer(.retailer(key))
        if let existing = config.retailer?.credentials, existing.id != retailer.id {
            throw .configuration(
                "\(configFile.path) holds the key of \(existing.name); this key is \(retailer.name)'s: set it from another LOYALTY_HOME"
            )
        }
        let credentials = RetailerCredentials(id: retailer.id, name: retailer.name, uuid: retailer.uuid, apiKey: key)
        config.retailer = Issued(credentials, issuer: api.origin)
        config.server = api.server.absoluteString
        try saveConfig(config)
        return credentials
    }
}

extension ClientConfig {
    /// Printable ASCII without spaces, as every key the server makes.
    public static func isKeyShaped(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) }
    }

    /// The retailer API key to send to `server`: LOYALTY_RETAILER_KEY (given with the command, as the server
    /// is), else the config file's, only to the server that issued it.
    public func retailerCredential(environment: [String: String], sendingTo server: URL) throws(ClientError)
        -> Credential
    {
        if let retailer, (environment["LOYALTY_RETAILER_KEY"] ?? "").isEmpty {
            try check(retailer, .retailerKey, sendingTo: server)
        }
        return try retailerCredential(environment: environment)
    }

    /// The retailer API key: LOYALTY_RETAILER_KEY, else the config file.
    public func retailerCredential(environment: [String: String]) throws(ClientError) -> Credential {
        if let key = environment["LOYALTY_RETAILER_KEY"], !key.isEmpty {
            // A key pasted with its line break would fail in the HTTP layer as if the network were down.
            guard Self.isKeyShaped(key) else {
                throw .unauthorized(.retailerKeyVariable)
            }
            return .retailer(key)
        }
        guard let retailer else {
            throw .notRegistered(.retailerKey)
        }
        return .retailer(retailer.credentials.apiKey)
    }
}
