extension QRCode {
    /// The symbol as a PNG file: 8-bit greyscale, dark modules black on white, each module `scale` pixels
    /// square, with the four-module quiet zone. A notification server shows it as the notification's image.
    /// The image data goes in stored (uncompressed) deflate blocks: a symbol is a few kilobytes, and no
    /// compressor is needed to make a valid file.
    public func png(scale: Int = 8, quietZone: Int = 4) -> [UInt8] {
        let side = (width + 2 * quietZone) * scale
        var pixels: [UInt8] = []
        pixels.reserveCapacity((side + 1) * side)
        for y in 0..<side {
            pixels.append(0)  // filter type None
            for x in 0..<side {
                let dark = isDark(row: y / scale - quietZone, column: x / scale - quietZone)
                pixels.append(dark ? 0 : 255)
            }
        }
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        header += [8, 0, 0, 0, 0]  // bit depth 8, greyscale, deflate, adaptive filtering, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + PNGChunk.bytes("IHDR", header) + PNGChunk.bytes("IDAT", PNGChunk.zlibStored(pixels))
            + PNGChunk.bytes("IEND", [])
    }
}

/// The pieces of a PNG file (ISO/IEC 15948): chunks with their CRC-32, and a zlib stream (RFC 1950) of stored
/// deflate blocks (RFC 1951, section 3.2.4).
enum PNGChunk {
    static func bytes(_ type: String, _ data: [UInt8]) -> [UInt8] {
        var chunk: [UInt8] = []
        chunk.appendBigEndian(UInt32(data.count))
        let typed = Array(type.utf8) + data
        chunk += typed
        chunk.appendBigEndian(crc32(typed))
        return chunk
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var stream: [UInt8] = [0x78, 0x01]  // deflate, 32 KiB window, no dictionary, fastest (FCHECK makes it % 31)
        var start = 0
        repeat {
            let end = min(start + 65_535, data.count)
            let length = UInt16(end - start)
            stream.append(end == data.count ? 1 : 0)  // BFINAL on the last block, BTYPE 00 (stored)
            stream += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            stream += data[start..<end]
            start = end
        } while start < data.count
        stream.appendBigEndian(adler32(data))
        return stream
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

extension [UInt8] {
    fileprivate mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
