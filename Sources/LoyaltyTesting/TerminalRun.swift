import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `loyalty` with a pseudo-terminal as its standard input (unless given another), output and error; what
/// it writes is collected as it comes.
public final class TerminalRun: @unchecked Sendable {
    public let process = Process()
    private let master: Int32
    private let lock = NSLock()
    private var output = Data()  // guarded by `lock`
    private let closed = DispatchSemaphore(value: 0)

    /// A terminal that colours (TERM xterm-256color, no NO_COLOR) unless `environment` says otherwise.
    public init(
        _ arguments: [String], _ device: StoryDevice, server: String? = nil, standardInput: FileHandle? = nil,
        rows: UInt16 = 60, columns: UInt16 = 160, environment: [String: String] = [:]
    ) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw StoryFailure("openpty failed: \(errno)") }
        self.master = master
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.executableURL = Binary("loyalty").url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(
            [
                "LOYALTY_HOME": device.home.path, "LOYALTY_SERVER": server ?? device.server.url,
                "TERM": "xterm-256color", "NO_COLOR": "",
            ]
        ) { $1 }.merging(environment) { $1 }
        process.standardInput = standardInput ?? terminal
        process.standardOutput = terminal
        process.standardError = terminal
        defer { close(slave) }  // the child holds it: reading the master ends when the child is gone
        try process.run()
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(self.master, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                lock.withLock { output.append(contentsOf: buffer[0..<count]) }
            }
            closed.signal()
        }.start()
    }

    deinit { close(master) }

    public var transcript: String { lock.withLock { String(decoding: output, as: UTF8.self) } }

    /// Whether `text` was written within `seconds`.
    public func waitFor(_ text: String, seconds: Double = 30) -> Bool {
        waitFor(seconds: seconds) { transcript.contains(text) }
    }

    /// Whether `condition` held within `seconds`.
    public func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(20_000)
        }
        return true
    }

    public func send(_ keys: String) {
        _ = keys.utf8CString.dropLast().withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// The exit status, or nil if it had not ended within `seconds`.
    public func waitForExit(seconds: Double = 30) -> Int32? {
        guard closed.wait(timeout: .now() + seconds) == .success else { return nil }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// The terminal's local modes now (ECHO, ICANON, ...).
    public func localModes() -> tcflag_t {
        var settings = termios()
        tcgetattr(master, &settings)
        return settings.c_lflag
    }

    /// Echo and line editing back on, as a shell puts them back for a job it stopped.
    public func setCanonical() {
        var settings = termios()
        tcgetattr(master, &settings)
        settings.c_lflag |= tcflag_t(ECHO | ICANON)
        tcsetattr(master, TCSANOW, &settings)
    }

    /// Ends a run a failed expectation left behind.
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
