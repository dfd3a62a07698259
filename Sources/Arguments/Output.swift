#if canImport(Glibc)
    import Glibc
#endif

extension Command {
    /// Parses `arguments` (without the program's name), runs the chosen command, and returns the exit
    /// code: 64 for wrong arguments, with the command's usage line.
    public func main(_ arguments: [String]) -> Int32 {
        do {
            switch try parse(arguments) {
            case .print(let text): printOut(text)
            case .run(let command, let parsed): try command.run?(parsed)
            }
            return ExitCode.success
        } catch let error as UsageError {
            printError("error: \(error.message)\n\(error.usage)\nSee '\(error.commandPath) --help'.")
            return ExitCode.usage
        } catch let exit as SilentExit {
            return exit.code
        } catch let failure as CommandError {
            printError("error: \(failure.description)")
            return failure.exitCode
        } catch {
            printError("error: \(error)")
            return ExitCode.failure
        }
    }
}

/// Writes to standard output, ending with a newline.
public func printOut(_ text: String) {
    print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
}

/// Writes bytes to standard output at once (a scan's range line is kilobytes). What `print` left in stdio's
/// buffer goes first, so lines keep their order.
public func printOut(bytes: [UInt8]) {
    fflush(nil)  // every output stream; stdout itself is not concurrency-safe to name
    bytes.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// Writes to standard error; `newline: false` for a progress line that rewrites itself.
public func printError(_ text: String, newline: Bool = true) {
    var line = !newline || text.hasSuffix("\n") ? text : text + "\n"
    line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
}
