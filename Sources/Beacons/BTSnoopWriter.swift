import SystemCalls

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a BTSnoop capture to a file descriptor through a fixed buffer: any HCI packet (commands, events,
/// data), in any of the three datalinks `BTSnoopReader` reads. Call `close()` (or `flush()`) to be sure
/// everything reached the file; `deinit` only flushes on a best-effort basis.
public final class BTSnoopWriter {
    public let datalink: BTSnoopDatalink
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let capacity: Int
    private var pending: [UInt8] = []
    private var written = 0
    private var closed = false

    /// Writes the file header; the descriptor stays the caller's to close.
    public convenience init(
        fileDescriptor: Int32, datalink: BTSnoopDatalink = .h4, bufferSize: Int = 1 << 20
    ) throws(BTSnoopError) {
        try self.init(descriptor: fileDescriptor, owns: false, datalink: datalink, bufferSize: bufferSize)
    }

    /// Creates (or truncates) `path` with mode 0644 and writes the file header; `close()` closes the file.
    public convenience init(
        path: String, datalink: BTSnoopDatalink = .h4, bufferSize: Int = 1 << 20
    ) throws(BTSnoopError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BTSnoopError(.openFailed(path: path, errno: errno), offset: 0) }
        try self.init(descriptor: descriptor, owns: true, datalink: datalink, bufferSize: bufferSize)
    }

    private init(descriptor: Int32, owns: Bool, datalink: BTSnoopDatalink, bufferSize: Int) throws(BTSnoopError) {
        self.descriptor = descriptor
        ownsDescriptor = owns
        self.datalink = datalink
        capacity = max(bufferSize, 4096)
        pending.reserveCapacity(capacity)
        pending.append(contentsOf: BTSnoopReader.magic)
        pending.appendBigEndian(UInt32(1))
        pending.appendBigEndian(datalink.rawValue)
    }

    deinit {
        if !closed {
            try? flush()
            if ownsDescriptor { _ = closeDescriptor(descriptor) }
        }
    }

    /// Appends one record. `packet` is the HCI packet without H4 byte (an event: code, length, parameters); the
    /// writer frames it as the datalink wants. `direction` defaults to the packet type's usual one (commands
    /// and outgoing data host to controller, events controller to host). The HCI datalink cannot tell ACL,
    /// SCO and ISO apart: it records them all as data.
    public func write(
        _ type: HCIPacketType, _ packet: UnsafeRawBufferPointer, at timestamp: BTSnoopTimestamp,
        direction: HCIDirection? = nil, adapterIndex: UInt16 = 0
    ) throws(BTSnoopError) {
        let direction = direction ?? (type == .event ? .controllerToHost : .hostToController)
        let received: UInt32 = direction == .controllerToHost ? 1 : 0
        let flags: UInt32
        let length: Int
        switch datalink {
        case .h4:
            flags = received | (type == .command || type == .event ? 2 : 0)
            length = packet.count + 1
        case .hci:
            flags = received | (type == .command || type == .event ? 2 : 0)
            length = packet.count
        case .monitor:
            flags = UInt32(adapterIndex) << 16 | UInt32(MonitorOpcode.opcode(type, direction))
            length = packet.count
        }
        pending.appendBigEndian(UInt32(length))
        pending.appendBigEndian(UInt32(length))
        pending.appendBigEndian(flags)
        pending.appendBigEndian(UInt32(0))  // cumulative drops
        pending.appendBigEndian(timestamp.microseconds)
        if datalink == .h4 { pending.append(type.rawValue) }
        pending.append(contentsOf: packet)
        if pending.count >= capacity { try flush() }
    }

    public func write(
        _ type: HCIPacketType, _ packet: [UInt8], at timestamp: BTSnoopTimestamp, direction: HCIDirection? = nil,
        adapterIndex: UInt16 = 0
    ) throws(BTSnoopError) {
        try packet.withBytes { bytes throws(BTSnoopError) in
            try write(type, bytes, at: timestamp, direction: direction, adapterIndex: adapterIndex)
        }
    }

    /// Writes out everything buffered.
    public func flush() throws(BTSnoopError) {
        do throws(SystemCallError) {
            try writeAll(pending, to: descriptor)
        } catch {
            pending.removeFirst(error.written)
            written += error.written
            throw BTSnoopError(.writeFailed(errno: error.code), offset: written)
        }
        written += pending.count
        pending.removeAll(keepingCapacity: true)
    }

    /// Flushes, and closes the file if the writer opened it.
    public func close() throws(BTSnoopError) {
        guard !closed else { return }
        closed = true
        var failure: BTSnoopError?
        do { try flush() } catch { failure = error }
        if ownsDescriptor, closeDescriptor(descriptor) != 0, failure == nil {
            failure = BTSnoopError(.writeFailed(errno: errno), offset: written)
        }
        if let failure { throw failure }
    }
}
