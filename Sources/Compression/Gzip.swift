internal import CZlib

/// gzip (RFC 1952) through zlib: what an HTTP answer's `Content-Encoding: gzip` holds.
public enum Gzip {
    /// `bytes` as one gzip member at `level` (1 fastest, 9 smallest; zlib's default 6).
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        // Fails only for a bad level or no memory; the level is clamped, and no memory ends the process anyway.
        guard loyalty_deflate_init_gzip(&stream, min(max(level, 0), 9)) == Z_OK else {
            fatalError("zlib could not start a gzip stream: out of memory")
        }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
        let produced = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                // deflateBound is enough for one Z_FINISH call: the stream ends here.
                let status = deflate(&stream, Z_FINISH)
                precondition(status == Z_STREAM_END, "deflate into deflateBound's room did not finish")
                return out.count - Int(stream.avail_out)
            }
        }
        output.removeSubrange(produced...)
        return output
    }

    /// The bytes a gzip stream holds, refusing more than `limit` of them (a small stream can expand a
    /// thousandfold) and anything that is not one whole, intact gzip member.
    public static func decompress(_ bytes: [UInt8], limit: Int) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        guard loyalty_inflate_init_gzip(&stream) == Z_OK else { throw .malformed("zlib could not start") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return try bytes.withUnsafeBufferPointer { input throws(GzipError) in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let (status, count) = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                guard count <= limit - output.count else { throw .tooLarge(limit: limit) }
                output.append(contentsOf: chunk[..<count])
                switch status {
                case Z_STREAM_END:
                    guard stream.avail_in == 0 else { throw .malformed("bytes after the end of the gzip stream") }
                    return output
                case Z_OK: continue
                case Z_BUF_ERROR where stream.avail_in == 0: throw .malformed("the gzip stream is cut short")
                default:
                    throw .malformed(stream.msg.map { String(cString: $0) } ?? "zlib error \(status)")
                }
            }
        }
    }
}

/// Why gzip bytes could not be read.
public enum GzipError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    /// The stream holds more than the caller's limit: reading stopped there.
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .malformed(let detail): "not a valid gzip stream: \(detail)"
        case .tooLarge(let limit): "the gzip stream holds more than \(limit) bytes"
        }
    }
}
