import Foundation

// Unaligned loads and stores at byte offsets. Callers check bounds first: these do not.

extension UnsafeRawBufferPointer {
    @inline(__always)
    func uint16BigEndian(at offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func uint16LittleEndian(at offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func uint32LittleEndian(at offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func uint32BigEndian(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func int64BigEndian(at offset: Int) -> Int64 {
        Int64(bigEndian: loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    @inline(__always)
    func int8(at offset: Int) -> Int8 { Int8(bitPattern: self[offset]) }

    @inline(__always)
    func bluetoothAddress(at offset: Int) -> BluetoothAddress {
        BluetoothAddress(wireLow: uint32LittleEndian(at: offset), high: uint16LittleEndian(at: offset + 4))
    }

    /// The 16 bytes at `offset` as a UUID, in order. A UUID is its `uuid_t` and nothing else, so this is one
    /// 16-byte load; `UUID(uuid:)` takes the tuple as 16 separate arguments, a tenth of a replay's decoding.
    @inline(__always)
    func uuid(at offset: Int) -> UUID {
        loadUnaligned(fromByteOffset: offset, as: UUID.self)
    }

    @inline(__always)
    func slice(_ offset: Int, count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: baseAddress.map { $0 + offset }, count: count)
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` keeping the body's typed error (the standard library's is `rethrows`).
    func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = withUnsafeBytes { bytes in
            Swift.Result { () throws(Failure) in try body(bytes) }
        }
        return try outcome.get()
    }

    mutating func appendBigEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendBigEndian(_ value: UInt32) {
        appendBigEndian(UInt16(truncatingIfNeeded: value >> 16))
        appendBigEndian(UInt16(truncatingIfNeeded: value))
    }

    mutating func appendBigEndian(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        appendBigEndian(UInt32(truncatingIfNeeded: bits >> 32))
        appendBigEndian(UInt32(truncatingIfNeeded: bits))
    }

    mutating func append(_ address: BluetoothAddress) {
        let b = address.bytes
        append(b.0)
        append(b.1)
        append(b.2)
        append(b.3)
        append(b.4)
        append(b.5)
    }
}
