import Foundation

/// Why a guest could not be had or used.
public enum GuestRadioError: Error, CustomStringConvertible {
    /// This machine cannot run the guest at all (no QEMU, no kernel, no Bumble): the reason, with the fix.
    case unavailable(String)
    case failed(String)
    case timedOut(String)

    public var description: String {
        switch self {
        case .unavailable(let reason): "the guest kernel cannot run here: \(reason)"
        case .failed(let what): "guest radio: \(what)"
        case .timedOut(let what): "guest radio: timed out waiting for \(what)"
        }
    }
}

/// What a command in the guest did.
public struct GuestCommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    /// Standard output's lines that parse as JSON objects.
    public var jsonLines: [[String: Any]] {
        stdout.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }
}

/// A Linux guest with the kernel's Bluetooth stack, for testing the live radio on a machine whose own
/// kernel has none (the README's live radio section says how it is built and why).
///
/// The Debian kernel boots under QEMU in software emulation (this machine's KVM cannot run stock
/// kernels) straight from its PVH entry point. The guest sees the host's `/` read-only over 9p under a
/// tmpfs overlay, so it runs the host's binaries unchanged at the same paths, and a writable share for
/// results. Its controller `hci0` is a Bumble controller on the host (C0, attached with btattach over a
/// virtio console); on the same link the peer (C1) advertises iBeacons and records what it hears
/// (`RadioPeer`). Commands go to the guest over a second console and run one at a time as root.
///
/// `shutdown()` (or deinit) powers the guest off and removes its run directory (kept with
/// LOYALTY_GUEST_KEEP set, for its logs); when the test process dies first, the peer (whose input then
/// ends) stops QEMU.
public final class GuestRadio: @unchecked Sendable {
    /// Seconds from starting QEMU to the guest's agent being ready.
    public let bootSeconds: Double
    public let peer: RadioPeer
    /// Where the guest's scripts live (Tests/GuestRadio); the same path inside the guest.
    public let scriptsDirectory: URL
    /// The writable share: the same path on the host and in the guest.
    public var resultsPath: String { runDirectory.appendingPathComponent("results").path }
    private let runDirectory: URL
    private let qemu: Process
    private let control: LineChannel
    private let lock = NSLock()
    private var commandCount = 0


    /// Why a guest cannot run on this machine, with what to install; nil when it can.
    public static func unavailableReason() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        func onPath(_ name: String) -> Bool {
            path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
        }
        if !onPath("qemu-system-x86_64") { return "no qemu-system-x86_64 (apt-get install qemu-system-x86)" }
        let kernels = (try? FileManager.default.contentsOfDirectory(atPath: "/boot"))?.filter {
            $0.hasPrefix("vmlinuz-")
        }
        if kernels?.isEmpty ?? true { return "no kernel in /boot (apt-get install linux-image-amd64)" }
        if !onPath("btattach") { return "no btattach (apt-get install bluez)" }
        if getuid() != 0 { return "the guest shares / over 9p and needs root to read all of it" }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import bumble"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "no python3" }
        probe.waitUntilExit()
        if probe.terminationStatus != 0 { return "no Bumble for python3 (make test-deps installs it)" }
        return nil
    }

    /// Builds the guest's kernel and initramfs if needed, starts the peer and boots the guest.
    /// `legacyOnly`: the guest's controller lacks LE Extended Advertising.
    public init(legacyOnly: Bool = false, bootTimeout: Double = 180) throws(GuestRadioError) {
        if let reason = Self.unavailableReason() { throw .unavailable(reason) }
        scriptsDirectory = Repository.root.appendingPathComponent("Tests/GuestRadio")
        let assets = Repository.root.appendingPathComponent(".build/guest-radio")
        let build = try Self.runTool(scriptsDirectory.appendingPathComponent("build-guest.sh").path, [assets.path])
        guard build.status == 0 else { throw .unavailable("build-guest.sh: \(build.stderr)") }

        runDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loyalty-guest-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let results = runDirectory.appendingPathComponent("results")
        do { try FileManager.default.createDirectory(at: results, withIntermediateDirectories: true) } catch {
            throw .failed("cannot create \(results.path): \(error)")
        }
        let hciSocket = runDirectory.appendingPathComponent("hci.sock").path
        let controlSocket = runDirectory.appendingPathComponent("control.sock").path
        peer = try RadioPeer(
            script: scriptsDirectory.appendingPathComponent("radio_peer.py"), hciSocket: hciSocket,
            legacyOnly: legacyOnly, log: runDirectory.appendingPathComponent("peer.log"))

        let started = Date()
        qemu = Process()
        qemu.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        qemu.arguments = [
            "qemu-system-x86_64",
            // This machine's KVM cannot run stock kernels; one vCPU is faster than two under TCG here.
            "-accel", "tcg", "-smp", "1", "-m", "1024", "-nographic", "-nodefaults", "-no-reboot",
            "-kernel", assets.appendingPathComponent("vmlinux").path,
            "-initrd", assets.appendingPathComponent("initramfs.cpio.gz").path,
            "-append",
            "console=ttyS0 quiet panic=-1 results=\(results.path) agent=\(scriptsDirectory.path)/agent.sh",
            "-serial", "file:\(runDirectory.appendingPathComponent("console.log").path)",
            "-virtfs", "local,path=/,mount_tag=hostroot,readonly=on,security_model=none,multidevs=remap",
            "-virtfs", "local,path=\(results.path),mount_tag=results,security_model=none",
            "-device", "virtio-serial-pci",
            "-chardev", "socket,id=hci,path=\(hciSocket)", "-device", "virtconsole,chardev=hci",
            "-chardev", "socket,id=control,path=\(controlSocket),server=on,wait=off",
            "-device", "virtconsole,chardev=control",
            // QEMU's user network: the guest reaches the host's loopback at 10.0.2.2 (`hostURL`).
            "-netdev", "user,id=net", "-device", "virtio-net-pci,netdev=net",
        ]
        qemu.standardInput = FileHandle.nullDevice
        qemu.standardOutput = FileHandle.nullDevice
        qemu.standardError = FileHandle(forWritingAtPath: "/dev/null")
        if let log = Self.logFile(runDirectory.appendingPathComponent("qemu.log")) { qemu.standardError = log }
        do { try qemu.run() } catch { throw .failed("cannot start QEMU: \(error)") }
        do throws(GuestRadioError) {
            try peer.guardProcess(qemu.processIdentifier)
            control = try LineChannel.connect(unixSocket: controlSocket, timeout: 30)
            guard let ready = try control.readLine(timeout: bootTimeout, waitingFor: "the guest to boot"),
                ready.hasPrefix("ready")
            else { throw .failed("the guest stopped before its agent started") }
        } catch {
            qemu.terminate()
            throw error
        }
        bootSeconds = Date().timeIntervalSince(started)
    }

    deinit { shutdown() }

    /// Powers the guest off (QEMU is stopped after 20 s) and removes the run directory. Idempotent.
    public func shutdown() {
        lock.lock()
        defer { lock.unlock() }
        if qemu.isRunning {
            try? control.write(line: "poweroff now")
            let deadline = Date().addingTimeInterval(20)
            while qemu.isRunning, Date() < deadline { usleep(50_000) }
            if qemu.isRunning { qemu.terminate() }
        }
        if ProcessInfo.processInfo.environment["LOYALTY_GUEST_KEEP"] == nil {
            try? FileManager.default.removeItem(at: runDirectory)
        }
    }

    /// Runs `command` under bash in the guest, as root, and waits up to `timeout` seconds for it.
    /// A command that overruns leaves the guest unusable: bound long-running commands with timeout(1).
    public func run(_ command: String, timeout: Double = 60) throws(GuestRadioError) -> GuestCommandResult {
        lock.lock()
        defer { lock.unlock() }
        commandCount += 1
        let id = "c\(commandCount)"
        try control.write(line: "\(id) \(Data(command.utf8).base64EncodedString())")
        while true {
            guard let line = try control.readLine(timeout: timeout, waitingFor: "`\(command)` in the guest") else {
                throw .failed("the guest went away during `\(command)`")
            }
            let words = line.split(separator: " ")
            guard words.count == 3, words[0] == "done", words[1] == id, let status = Int32(words[2]) else { continue }
            func text(_ name: String) -> String {
                (try? String(contentsOfFile: "\(resultsPath)/\(name)", encoding: .utf8)) ?? ""
            }
            return GuestCommandResult(status: status, stdout: text("\(id).out"), stderr: text("\(id).err"))
        }
    }

    /// Starts `command` in the guest's background and returns at once; its output goes to the results
    /// share, read with `background(_:)`. For a scan that must see the peer change while it runs.
    public func startInBackground(_ command: String, name: String) throws(GuestRadioError) {
        let results = resultsPath
        let script = "(\(command)) >\(results)/\(name).out 2>\(results)/\(name).err </dev/null & echo $! >\(results)/\(name).pid"
        let started = try run(script, timeout: 30)
        guard started.status == 0 else { throw .failed("cannot start `\(command)`: \(started.stderr)") }
    }

    /// Waits up to `timeout` seconds for a background command to end, and returns its output.
    public func background(_ name: String, timeout: Double) throws(GuestRadioError) -> GuestCommandResult {
        let results = resultsPath
        let waited = try run(
            "pid=$(cat \(results)/\(name).pid); for _ in $(seq \(Int(timeout * 10))); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; ! kill -0 $pid 2>/dev/null",
            timeout: timeout + 30)
        guard waited.status == 0 else { throw .timedOut("`\(name)` to end in the guest within \(timeout) s") }
        func text(_ suffix: String) -> String {
            (try? String(contentsOfFile: "\(results)/\(name).\(suffix)", encoding: .utf8)) ?? ""
        }
        return GuestCommandResult(status: 0, stdout: text("out"), stderr: text("err"))
    }

    /// `url` (a server the test runs on the host's 127.0.0.1) as the guest reaches it: QEMU's user network maps
    /// 10.0.2.2 to the host's loopback. Brings the guest's network interface up the first time.
    public func hostURL(_ url: String) throws(GuestRadioError) -> String {
        let up = try run(
            "ip -o -4 addr show | grep -q 10.0.2.15 && exit 0; modprobe virtio_net || exit 1; "
                + "for _ in $(seq 50); do dev=$(ls /sys/class/net | grep -v '^lo$' | head -1); [ -n \"$dev\" ] && break; sleep 0.1; done; "
                + "ip link set \"$dev\" up && ip addr add 10.0.2.15/24 dev \"$dev\" && ip route add default via 10.0.2.2",
            timeout: 60)
        guard up.status == 0 else { throw .failed("cannot bring the guest's network up: \(up.stdout)\(up.stderr)") }
        return url.replacingOccurrences(of: "127.0.0.1", with: "10.0.2.2")
    }

    /// Attaches the peer's controller as hci0 (modprobe hci_uart, btattach) and waits for it.
    public func attachController() throws(GuestRadioError) {
        let attached = try run("\(scriptsDirectory.path)/attach.sh", timeout: 60)
        guard attached.status == 0 else { throw .failed("cannot attach hci0: \(attached.stdout)\(attached.stderr)") }
    }

    private static func logFile(_ url: URL) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return FileHandle(forWritingAtPath: url.path)
    }

    /// Runs a host tool to completion (the asset build).
    static func runTool(_ path: String, _ arguments: [String]) throws(GuestRadioError) -> GuestCommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { throw .failed("cannot run \(path): \(error)") }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return GuestCommandResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}
