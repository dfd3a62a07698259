import Foundation

/// The Bumble process beside the guest (Tests/GuestRadio/radio_peer.py): the guest's controller C0 and
/// the peer C1 on one link. Through it a test makes the peer advertise iBeacons, reads what the peer
/// heard, and reads or changes the guest's controller.
public final class RadioPeer: @unchecked Sendable {
    /// An advertising PDU the peer heard.
    public struct HeardPDU: Sendable, Hashable {
        /// ADV_IND, ADV_NONCONN_IND or ADV_EXT_IND.
        public let kind: String
        public let address: String
        public let data: [UInt8]
    }

    public enum AdvertisingKind: String, Sendable { case legacy, extended }

    private let process: Process
    private let requests: LineChannel
    private let answers: LineChannel
    private let lock = NSLock()

    init(script: URL, hciSocket: String, legacyOnly: Bool, log: URL) throws(GuestRadioError) {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--hci-socket", hciSocket] + (legacyOnly ? ["--legacy-only"] : [])
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log.path)
        do { try process.run() } catch { throw .failed("cannot start the radio peer: \(error)") }
        requests = LineChannel(descriptor: fcntl(input.fileHandleForWriting.fileDescriptor, F_DUPFD_CLOEXEC, 0))
        answers = LineChannel(descriptor: fcntl(output.fileHandleForReading.fileDescriptor, F_DUPFD_CLOEXEC, 0))
        try? input.fileHandleForWriting.close()
        try? output.fileHandleForReading.close()
        guard let ready = try answers.readLine(timeout: 60, waitingFor: "the radio peer to start"), ready.contains("ready")
        else {
            let reason = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw .failed("the radio peer did not start: \(reason.suffix(2000))")
        }
    }

    deinit {
        // Closing its standard input (with `requests`) ends the peer; make sure.
        if process.isRunning { process.terminate() }
    }

    /// Advertises `data` (the advertising data, AD structures) from the peer every `intervalMS`
    /// milliseconds until stopped; `id` names it, so several can run at once. `rssi` is what the guest's
    /// controller reports for it; `address` the advertiser's (default the peer's, C1:C1:C1:C1:C1:C1).
    public func advertise(
        _ data: [UInt8], kind: AdvertisingKind = .legacy, id: String = "a", intervalMS: Int = 100, rssi: Int = -59,
        address: String? = nil
    ) throws(GuestRadioError) {
        var message: [String: Any] = [
            "op": "advertise", "id": id, "kind": kind.rawValue, "data": hex(data), "interval_ms": intervalMS, "rssi": rssi,
        ]
        if let address { message["address"] = address }
        _ = try request(message)
    }

    /// Advertises the secure beacon of a provisioning document (`loyalty retailer beacon secure --output FILE`) as
    /// `id`: the peer computes its EIDs itself (as Google's eidtools.py does, not with loyalty's code) from the
    /// document's key, K and counter and the host's clock, in the document's form, and replaces the data when the
    /// window turns. Returns the advertising data of now.
    @discardableResult
    public func advertiseSecure(file: String, id: String = "s", rssi: Int = -59) throws(GuestRadioError) -> [UInt8] {
        let answer = try request(["op": "advertise_secure", "id": id, "file": file, "rssi": rssi])
        return bytes(hex: answer["data"] as? String ?? "")
    }

    /// Stops the advertisement named `id`, or every one.
    public func stop(id: String? = nil) throws(GuestRadioError) {
        var message: [String: Any] = ["op": "stop"]
        if let id { message["id"] = id }
        _ = try request(message)
    }

    /// What the peer heard from index `since` on, and the index to ask from next.
    public func heard(since: Int = 0) throws(GuestRadioError) -> (pdus: [HeardPDU], next: Int) {
        let answer = try request(["op": "heard", "since": since])
        let pdus = (answer["pdus"] as? [[String: Any]] ?? []).map { pdu in
            HeardPDU(
                kind: pdu["kind"] as? String ?? "", address: pdu["address"] as? String ?? "",
                data: bytes(hex: pdu["data"] as? String ?? ""))
        }
        return (pdus, answer["next"] as? Int ?? since)
    }

    /// Makes the peer end process `pid` (QEMU) when it ends itself, which it does when this process dies.
    func guardProcess(_ pid: Int32) throws(GuestRadioError) {
        _ = try request(["op": "guard", "pid": Int(pid)])
    }

    /// Gives the guest's controller LE Extended Advertising, or takes it away.
    public func setGuestExtendedAdvertising(_ supported: Bool) throws(GuestRadioError) {
        _ = try request(["op": "features", "extended": supported])
    }

    /// How the guest's controller answers LE commands: normally (nil), with an error status ("error"),
    /// or never ("silent").
    public func setGuestMisbehaviour(_ mode: String?) throws(GuestRadioError) {
        _ = try request(["op": "misbehave", "mode": mode ?? "none"])
    }

    /// The guest's controller as it is now: scanning (and with which command set), advertising.
    public func guestControllerState() throws(GuestRadioError) -> (scanning: Bool, scanCommands: String?, advertising: Bool) {
        let answer = try request(["op": "state"])
        return (answer["scanning"] as? Bool ?? false, answer["scan_commands"] as? String, answer["advertising"] as? Bool ?? false)
    }

    /// The last scan parameters the guest's controller took: LE_Scan_Type, LE_Scan_Interval, LE_Scan_Window (the
    /// LE 1M PHY's for the extended command); nil before any.
    public func guestScanParameters() throws(GuestRadioError) -> [Int]? {
        try request(["op": "state"])["scan_parameters"] as? [Int]
    }

    private func request(_ message: [String: Any]) throws(GuestRadioError) -> [String: Any] {
        lock.lock()
        defer { lock.unlock() }
        let data: Data
        do { data = try JSONSerialization.data(withJSONObject: message) } catch { throw .failed("\(error)") }
        try requests.write(line: String(decoding: data, as: UTF8.self))
        guard let line = try answers.readLine(timeout: 30, waitingFor: "the radio peer's answer"),
            let answer = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw .failed("the radio peer went away") }
        guard answer["ok"] as? Bool == true else {
            throw .failed("the radio peer refused \(message["op"] ?? ""): \(answer["error"] ?? "")")
        }
        return answer
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), next > index {
            if let byte = UInt8(hex[index..<next], radix: 16) { result.append(byte) }
            index = next
        }
        return result
    }
}
