import CGif
import KilnModel

/// Decodes GIF with giflib's low-level streaming API (`DGifGetRecordType`, `DGifGetImageDesc`,
/// `DGifGetLine`), never `DGifSlurp` (which holds every frame of the file at once).
///
/// - Header: `GIFStructure` walks the blocks without decoding: canvas, frame count, loop count,
///   alpha. `DecodeLimits` (canvas, canvas × frames) and the stored frames' total area are
///   checked from it before any pixel buffer exists.
/// - Frames are composited onto a canvas that starts transparent (as browsers do; the
///   background colour index is ignored, as they do): local or global palette, the transparent
///   index left undrawn, interlaced rows put in place, frames smaller than the canvas drawn at
///   their offset and clipped to it. Rows of a non-interlaced frame below the canvas are skipped
///   without decoding them; the still path prices each frame by what is decoded
///   (`AnimationInfo.decodedPixels`), so a frame far larger than its canvas is cheap when clipped
///   and a 413 (request work) when it is interlaced. After a frame is handed out, its disposal applies: 0/1 keep,
///   2 clears its rectangle to transparent, 3 restores the rectangle as it was before the frame.
/// - An index beyond the palette paints opaque black. A frame without any palette, an LZW error
///   or a file that ends inside a frame is `DecodeError.corrupt`.
/// - Output: RGBA when a frame can leave transparent pixels, else RGB.
public struct GIFDecoder: ImageDecoding, AnimationDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        let info = try readAnimation(data)
        return ImageHeader(format: .gif, width: info.canvas.width, height: info.canvas.height,
                           frameCount: info.frameCount, orientation: 1, hasAlpha: info.hasAlpha)
    }

    /// The first frame, composited (the still path; animations go through `decodeFrames`).
    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        let header = try readHeader(data)
        try options.limits.check(header)
        var first: PixelBuffer?
        do {
            try decodeFrames(data) { frame in
                first = frame.buffer
                return false
            }
        } catch let error as DecodeError {
            throw error
        } catch {
            throw .corrupt("GIF: \(error)")
        }
        guard let first else { throw .corrupt("GIF has no image") }
        return DecodedImage(buffer: first, header: header)
    }

    public func readAnimation(_ data: [UInt8]) throws(DecodeError) -> AnimationInfo {
        let structure = try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> GIFStructure in try GIFStructure.scan(bytes) }
        }.get()
        return AnimationInfo(canvas: structure.canvas, frameCount: structure.frameCount,
                             loopCount: structure.webpLoopCount, hasAlpha: structure.hasAlpha,
                             storedPixels: structure.storedPixels, decodedPixels: structure.decodedPixels)
    }

    public func decodeFrames(_ data: [UInt8], _ body: (AnimationFrame) throws -> Bool) throws {
        try data.withUnsafeBytes { bytes in
            let structure = try GIFStructure.scan(bytes)
            guard let base = bytes.baseAddress else { throw DecodeError.corrupt("empty GIF") }
            let reader = GIFByteReader(base: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            try withExtendedLifetime(reader) {
                var status: Int32 = 0
                guard let gif = DGifOpen(Unmanaged.passUnretained(reader).toOpaque(), gifRead, &status) else {
                    throw DecodeError.corrupt("GIF could not be opened: \(Self.describe(status))")
                }
                defer { var closeError: Int32 = 0; DGifCloseFile(gif, &closeError) }
                var compositor = GIFCompositor(canvas: structure.canvas, hasAlpha: structure.hasAlpha)
                try Self.run(gif, structure: structure, compositor: &compositor, body)
            }
        }
    }

    private static func run(_ gif: UnsafeMutablePointer<GifFileType>, structure: GIFStructure,
                            compositor: inout GIFCompositor, _ body: (AnimationFrame) throws -> Bool) throws {
        var control = GIFCompositor.Control()
        var row = [UInt8](repeating: 0, count: max(structure.widestFrame, 1))
        var index = 0
        while index < structure.frameCount {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else {
                throw DecodeError.corrupt("GIF is truncated or malformed at frame \(index): \(describe(gif.pointee.Error))")
            }
            switch record {
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else {
                    throw DecodeError.corrupt("GIF extension is truncated: \(describe(gif.pointee.Error))")
                }
                if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
                    control = GIFCompositor.Control(disposal: Int(block[1] >> 2) & 7,
                                                    transparentIndex: block[1] & 1 != 0 ? Int(block[4]) : nil,
                                                    delayCentiseconds: Int(block[2]) | Int(block[3]) << 8)
                }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                        throw DecodeError.corrupt("GIF extension is truncated: \(describe(gif.pointee.Error))")
                    }
                }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else {
                    throw DecodeError.corrupt("GIF frame \(index) descriptor is truncated: \(describe(gif.pointee.Error))")
                }
                let desc = gif.pointee.Image
                guard let map = desc.ColorMap ?? gif.pointee.SColorMap else {
                    throw DecodeError.corrupt("GIF frame \(index) has no colour table")
                }
                let palette = GIFCompositor.palette(UnsafeBufferPointer(start: map.pointee.Colors,
                                                                         count: Int(max(map.pointee.ColorCount, 0))))
                let rect = GIFCompositor.Rect(left: Int(desc.Left), top: Int(desc.Top),
                                              width: Int(desc.Width), height: Int(desc.Height))
                compositor.begin(rect, control: control)
                // Rows of a non-interlaced frame below the canvas are never shown: skipped unread.
                let drawn = desc.Interlace ? rect.height : min(rect.height, max(0, structure.canvas.height - rect.top))
                for stored in 0..<drawn {
                    let ok = row.withUnsafeMutableBufferPointer { buffer in
                        DGifGetLine(gif, buffer.baseAddress, Int32(rect.width)) == GIF_OK
                    }
                    guard ok else {
                        throw DecodeError.corrupt("GIF frame \(index) is truncated or its LZW data is broken: \(describe(gif.pointee.Error))")
                    }
                    let y = desc.Interlace ? GIFCompositor.interlacedRow(stored, height: rect.height) : stored
                    compositor.draw(row: row, y: y, palette: palette, transparentIndex: control.transparentIndex)
                }
                if drawn < rect.height { try Self.skipRestOfFrame(gif, index: index) }
                let frame = AnimationFrame(index: index, buffer: compositor.snapshot(),
                                           durationMilliseconds: control.delayCentiseconds * 10)
                guard try body(frame) else { return }
                compositor.dispose()
                control = GIFCompositor.Control()
                index += 1
            case TERMINATE_RECORD_TYPE:
                return
            default:
                throw DecodeError.corrupt("GIF has an unknown record at frame \(index)")
            }
        }
    }

    /// Skips the compressed data sub-blocks left of the current frame (giflib has read whole
    /// sub-blocks only, so the file is at a block boundary; the next image descriptor resets LZW).
    private static func skipRestOfFrame(_ gif: UnsafeMutablePointer<GifFileType>, index: Int) throws {
        var block: UnsafeMutablePointer<GifByteType>?
        repeat {
            guard DGifGetCodeNext(gif, &block) == GIF_OK else {
                throw DecodeError.corrupt("GIF frame \(index) is truncated: \(describe(gif.pointee.Error))")
            }
        } while block != nil
    }

    static func describe(_ code: Int32) -> String {
        guard let text = GifErrorString(code) else { return "giflib error \(code)" }
        return String(cString: text)
    }
}

/// The bytes giflib reads through `gifRead` (its `InputFunc`): no FILE*, no copy.
final class GIFByteReader {
    let base: UnsafePointer<UInt8>
    let count: Int
    var offset = 0

    init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }
}

private let gifRead: InputFunc = { gif, buffer, length in
    guard let gif, let buffer, length > 0, let user = gif.pointee.UserData else { return 0 }
    let reader = Unmanaged<GIFByteReader>.fromOpaque(user).takeUnretainedValue()
    let n = min(Int(length), reader.count - reader.offset)
    guard n > 0 else { return 0 }
    buffer.update(from: reader.base + reader.offset, count: n)
    reader.offset += n
    return Int32(n)
}
