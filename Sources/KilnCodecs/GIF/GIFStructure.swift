import KilnModel

/// A walk over a GIF's block structure (screen descriptor, extensions, image descriptors, the
/// data sub-blocks skipped by their lengths) that decodes no pixel and allocates nothing per
/// frame: the canvas, the frame count, the NETSCAPE2.0 loop count, whether any frame can leave
/// transparent pixels, the sum of the frames' stored areas and what decoding each frame costs. Bombs
/// (a huge canvas, thousands of frames, frames far larger than the canvas) are judged from this
/// before anything is decoded.
///
/// A file that ends inside a block is truncated (`DecodeError.corrupt`); one that ends after a
/// complete frame without the trailer byte is accepted, as browsers do.
struct GIFStructure: Equatable {
    var canvas: PixelSize
    var frameCount = 0
    /// The NETSCAPE2.0 count as stored (0: forever); nil without the extension (play once).
    var netscapeLoops: Int?
    /// A frame has a transparent colour index or does not cover the whole canvas.
    var hasAlpha = false
    /// Sum of width × height of the stored frames.
    var storedPixels = 0
    /// Widest stored frame (the row buffer of the decoder).
    var widestFrame = 0
    /// Per frame, the pixels the decoder runs through LZW: a frame is clipped to the canvas, and
    /// the rows of a non-interlaced frame below the canvas are skipped unread (`GIFDecoder`), but
    /// every row it draws is decoded whole, and an interlaced frame's passes are decoded whole.
    var decodedPixels: [Int] = []
    /// Sum of the graphic control extensions' delays, in centiseconds (`f:json`'s duration).
    var totalDelay = 0

    /// The pixels the decoder runs through LZW for a frame at `top` of `width` × `height`.
    static func decodedPixels(canvasHeight: Int, top: Int, width: Int, height: Int, interlaced: Bool) -> Int {
        interlaced ? width * height : width * min(height, max(0, canvasHeight - top))
    }

    /// The loop count as WebP stores it (see `AnimationInfo.loopCount`).
    var webpLoopCount: Int {
        guard let loops = netscapeLoops else { return 1 }
        return loops == 0 ? 0 : min(loops + 1, 65_535)
    }

    static func isGIF(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 6 && bytes[0] == 0x47 && bytes[1] == 0x49 && bytes[2] == 0x46 && bytes[3] == 0x38
            && (bytes[4] == 0x37 || bytes[4] == 0x39) && bytes[5] == 0x61
    }

    /// Walks the whole file. `maxFrames` stops the walk early (over a limit the exact count does
    /// not matter: the count returned is then `maxFrames + 1`).
    static func scan(_ bytes: UnsafeRawBufferPointer, maxFrames: Int = .max) throws(DecodeError) -> GIFStructure {
        guard isGIF(bytes) else { throw .corrupt("not a GIF (bad signature)") }
        var cursor = Cursor(bytes: bytes, offset: 6)
        let width = try cursor.u16(), height = try cursor.u16()
        let packed = try cursor.u8()
        cursor.offset += 2   // background colour index, aspect ratio
        guard width > 0, height > 0 else { throw .corrupt("GIF canvas has no pixels (\(width)x\(height))") }
        var result = GIFStructure(canvas: PixelSize(width: width, height: height))
        if packed & 0x80 != 0 { try cursor.skip(3 << ((Int(packed) & 7) + 1)) }
        var pendingTransparency = false
        while true {
            guard cursor.offset < bytes.count else {
                if result.frameCount > 0 { return result }   // no trailer after a whole frame: tolerated
                throw .corrupt("GIF is truncated before its first image")
            }
            switch try cursor.u8() {
            case 0x21:
                let label = try cursor.u8()
                if label == 0xF9 {
                    let size = try cursor.u8()
                    let start = cursor.offset
                    if size >= 4 {
                        pendingTransparency = try cursor.u8() & 1 != 0
                        result.totalDelay += try cursor.u16()
                    }
                    cursor.offset = start
                    try cursor.skip(Int(size))
                    try cursor.skipSubBlocks()
                } else if label == 0xFF {
                    let size = Int(try cursor.u8())
                    let start = cursor.offset
                    try cursor.skip(size)
                    let id = size == 11 ? String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<start + 11]), as: UTF8.self) : ""
                    if id == "NETSCAPE2.0" || id == "ANIMEXTS1.0" {
                        // Sub-block 1: 0x01, loop count (u16 LE).
                        let subSize = Int(try cursor.u8())
                        let subStart = cursor.offset
                        if subSize >= 3 {
                            if try cursor.u8() == 1 { result.netscapeLoops = try cursor.u16() }
                        }
                        cursor.offset = subStart
                        if subSize > 0 {
                            try cursor.skip(subSize)
                            try cursor.skipSubBlocks()
                        }
                    } else {
                        try cursor.skipSubBlocks()
                    }
                } else {
                    try cursor.skipSubBlocks()
                }
            case 0x2C:
                let left = try cursor.u16(), top = try cursor.u16()
                let frameWidth = try cursor.u16(), frameHeight = try cursor.u16()
                let flags = try cursor.u8()
                if flags & 0x80 != 0 { try cursor.skip(3 << ((Int(flags) & 7) + 1)) }
                let codeSize = try cursor.u8()
                guard (1...11).contains(codeSize) else { throw .corrupt("GIF frame \(result.frameCount) has an invalid LZW code size \(codeSize)") }
                try cursor.skipSubBlocks()
                if pendingTransparency || left > 0 || top > 0 || left + frameWidth < width || top + frameHeight < height {
                    result.hasAlpha = true
                }
                pendingTransparency = false
                result.frameCount += 1
                result.storedPixels += frameWidth * frameHeight
                result.widestFrame = max(result.widestFrame, frameWidth)
                result.decodedPixels.append(Self.decodedPixels(canvasHeight: height, top: top, width: frameWidth,
                                                               height: frameHeight, interlaced: flags & 0x40 != 0))
                if result.frameCount > maxFrames { return result }
            case 0x3B:
                guard result.frameCount > 0 else { throw .corrupt("GIF has no image") }
                return result
            case let byte:
                throw .corrupt("GIF has an unknown block 0x\(String(byte, radix: 16)) after frame \(result.frameCount)")
            }
        }
    }

    /// Bounds-checked reads; running off the end is truncation.
    private struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        mutating func u8() throws(DecodeError) -> UInt8 {
            guard offset < bytes.count else { throw .corrupt("GIF is truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func u16() throws(DecodeError) -> Int {
            let lo = Int(try u8())
            return lo | Int(try u8()) << 8
        }

        mutating func skip(_ n: Int) throws(DecodeError) {
            guard n <= bytes.count - offset else { throw .corrupt("GIF is truncated") }
            offset += n
        }

        /// Data sub-blocks up to and including the zero-length terminator.
        mutating func skipSubBlocks() throws(DecodeError) {
            while true {
                let size = Int(try u8())
                if size == 0 { return }
                try skip(size)
            }
        }
    }
}
