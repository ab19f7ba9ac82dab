import CGif
import KilnModel

/// Writes GIF89a with giflib's encoder (`EGifOpen` into memory, `EGifPutLine`), one frame at a
/// time: the logical screen, the NETSCAPE2.0 loop extension for animations, and per frame a
/// graphics control extension (delay, transparent index, disposal "none") and the image with
/// its own local colour table (`GIFQuantizer`'s palette for that frame).
final class GIFWriter {
    private(set) var bytes: [UInt8] = []
    private var gif: UnsafeMutablePointer<GifFileType>?
    let size: PixelSize

    /// `loopCount` as WebP stores it (`AnimationInfo.loopCount`): 0 forever, n plays; nil for a still.
    init(size: PixelSize, loopCount: Int?) throws(EncodeError) {
        self.size = size
        guard size.width > 0, size.height > 0, size.width <= 65_535, size.height <= 65_535 else {
            throw .failed("GIF is limited to 65535x65535 pixels; this image is \(size.width)x\(size.height)")
        }
        var status: Int32 = 0
        guard let gif = EGifOpen(Unmanaged.passUnretained(self).toOpaque(), gifWrite, &status) else {
            throw .failed("giflib could not start a GIF: \(Self.describe(status))")
        }
        self.gif = gif
        EGifSetGifVersion(gif, true)
        try check(EGifPutScreenDesc(gif, Int32(size.width), Int32(size.height), 8, 0, nil), "screen")
        // A GIF without the extension plays once; NETSCAPE2.0 counts repetitions after the first.
        if let loopCount, loopCount != 1 {
            let repeats = loopCount == 0 ? 0 : min(loopCount - 1, 65_535)
            try check(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE), "loop")
            let name = Array("NETSCAPE2.0".utf8)
            try check(EGifPutExtensionBlock(gif, Int32(name.count), name), "loop")
            let data: [UInt8] = [1, UInt8(repeats & 0xFF), UInt8(repeats >> 8)]
            try check(EGifPutExtensionBlock(gif, 3, data), "loop")
            try check(EGifPutExtensionTrailer(gif), "loop")
        }
    }

    deinit {
        if let gif {
            // Unfinished (an error on the way): nothing more is written to this dying writer.
            gif.pointee.UserData = nil
            var error: Int32 = 0
            EGifCloseFile(gif, &error)
        }
    }

    /// Adds `image` (this writer's size) shown for `durationMilliseconds` (GIF stores centiseconds).
    func add(_ image: PixelBuffer, durationMilliseconds: Int) throws(EncodeError) {
        guard let gif else { throw .failed("GIF already finished") }
        guard image.width == size.width, image.height == size.height else { throw .failed("GIF frame of another size") }
        let quantized = GIFQuantizer.quantize(image)
        var control = GraphicsControlBlock(DisposalMode: DISPOSE_DO_NOT, UserInputFlag: false,
                                           DelayTime: Int32(min((durationMilliseconds + 5) / 10, 65_535)),
                                           TransparentColor: quantized.transparentIndex.map(Int32.init) ?? Int32(NO_TRANSPARENT_COLOR))
        var extensionBytes = [UInt8](repeating: 0, count: 4)
        let length = EGifGCBToExtension(&control, &extensionBytes)
        try check(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), extensionBytes), "frame control")
        // A colour table holds a power of two entries (at least 2).
        let entries = quantized.palette.count / 3
        var tableSize = 2
        while tableSize < entries { tableSize *= 2 }
        var colours = [GifColorType](repeating: GifColorType(Red: 0, Green: 0, Blue: 0), count: tableSize)
        for e in 0..<entries {
            colours[e] = GifColorType(Red: quantized.palette[3 * e], Green: quantized.palette[3 * e + 1], Blue: quantized.palette[3 * e + 2])
        }
        guard let map = GifMakeMapObject(Int32(tableSize), colours) else { throw .failed("giflib could not make a colour table") }
        defer { GifFreeMapObject(map) }
        try check(EGifPutImageDesc(gif, 0, 0, Int32(size.width), Int32(size.height), false, map), "image")
        var indices = quantized.indices
        try indices.withUnsafeMutableBufferPointer { rows throws(EncodeError) in
            for y in 0..<size.height {
                try check(EGifPutLine(gif, rows.baseAddress! + y * size.width, Int32(size.width)), "row")
            }
        }
    }

    /// The file: closes the GIF (its trailer) and hands out the bytes.
    func finish() throws(EncodeError) -> [UInt8] {
        guard let gif else { throw .failed("GIF already finished") }
        self.gif = nil
        var error: Int32 = 0
        guard EGifCloseFile(gif, &error) == GIF_OK else { throw .failed("giflib could not finish the GIF: \(Self.describe(error))") }
        return bytes
    }

    fileprivate func append(_ data: UnsafePointer<GifByteType>, _ count: Int) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
    }

    private func check(_ status: Int32, _ what: String) throws(EncodeError) {
        guard status == GIF_OK else {
            throw .failed("giflib could not write the GIF's \(what): \(Self.describe(gif?.pointee.Error ?? 0))")
        }
    }

    static func describe(_ code: Int32) -> String {
        GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
    }
}

/// giflib's output callback: appends to the `GIFWriter` in `UserData`.
private func gifWrite(_ gif: UnsafeMutablePointer<GifFileType>?, _ data: UnsafePointer<GifByteType>?, _ count: Int32) -> Int32 {
    guard let gif, let data, count > 0, let user = gif.pointee.UserData else { return 0 }
    Unmanaged<GIFWriter>.fromOpaque(user).takeUnretainedValue().append(data, Int(count))
    return count
}
