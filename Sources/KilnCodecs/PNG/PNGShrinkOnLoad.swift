import CKilnCodecShims
import KilnModel

/// Shrink-on-load for large PNGs (issue 14): when a resize comes first and the whole decoded
/// source would be big, the rows are read one at a time through libpng's row API
/// (`kiln_png_rows_*`) and averaged into integer boxes as they pass (libvips' `shrinkv` /
/// `shrinkh`), so the full-size image is never held. The resize then resamples the shrunk image
/// (its plan maps the logical size onto the decoded one, as for JPEG's DCT scaling).
///
/// - Used only when the decoded source would take at least `minimumBytes` (64 MiB: 16 MP RGBA)
///   and the box factor is at least 2 on one axis; smaller sources decode whole, so ordinary
///   thumbnails come out exactly as before.
/// - The boxes are `kx × ky` source pixels with `kx = ⌊width / minimum.width⌋` (likewise `ky`):
///   the result still covers `DecodeOptions.minimumSize` (which keeps the 1.25 margin of
///   `ImagePipeline.shrinkOnLoadMargin`), and the resize's Lanczos does the rest. The last box of
///   a row or column may be partial; it averages the pixels it has.
/// - RGBA is averaged premultiplied (a transparent pixel's colour does not bleed) and written
///   with straight alpha, like a full decode.
/// - Only files the row reader returns exactly as the simplified API would are eligible
///   (non-interlaced, ≤ 8 bits per sample, sRGB-encoded: `PNGChunks.rowReadable`); the others
///   (Adam7, 16-bit, a gAMA other than sRGB's) decode whole, and the memory budget counts that.
public enum PNGShrinkOnLoad {
    /// Sources whose decoded pixels take fewer bytes than this decode whole.
    public static let minimumBytes = 64 << 20

    /// The box factors for a source of `size` (stored orientation) decoded for `minimum`, nil
    /// when the image decodes whole.
    static func factors(size: PixelSize, channels: Int, minimum: PixelSize?) -> (x: Int, y: Int)? {
        guard let minimum, minimum.width > 0, minimum.height > 0,
              size.width * size.height * channels >= minimumBytes else { return nil }
        let kx = max(1, size.width / minimum.width), ky = max(1, size.height / minimum.height)
        return kx >= 2 || ky >= 2 ? (kx, ky) : nil
    }

    /// The size a decode of `bytes` produces for `minimum`: the shrunk size when the file is
    /// streamed, else the stored size; nil when the bytes are not a PNG the scan accepts.
    /// For the memory budget, before anything is decoded.
    public static func plannedDecode(_ data: [UInt8], minimum: PixelSize?) -> (size: PixelSize, channels: Int, streamed: Bool)? {
        data.withUnsafeBytes { bytes -> (PixelSize, Int, Bool)? in
            guard let chunks = try? PNGChunks.scan(bytes), let ihdr = chunks.ihdr else { return nil }
            let size = PixelSize(width: ihdr.width, height: ihdr.height)
            let channels = ihdr.hasAlpha || chunks.hasTransparency ? 4 : 3
            if chunks.rowReadable, let k = factors(size: size, channels: channels, minimum: minimum) {
                return (shrunk(size, k), channels, true)
            }
            return (size, channels, false)
        }
    }

    static func shrunk(_ size: PixelSize, _ k: (x: Int, y: Int)) -> PixelSize {
        PixelSize(width: (size.width + k.x - 1) / k.x, height: (size.height + k.y - 1) / k.y)
    }

    /// Reads `bytes` (what libpng is shown) row by row into boxes of `k`; nil when libpng's
    /// row reader finds the file not eligible after all (the caller decodes it whole).
    static func decode(_ bytes: UnsafeRawBufferPointer, k: (x: Int, y: Int)) throws(DecodeError) -> PixelBuffer? {
        guard let base = bytes.baseAddress else { throw .corrupt("empty PNG data") }
        var handle: OpaquePointer? = nil
        var width: UInt32 = 0, height: UInt32 = 0
        var channels: Int32 = 0
        var message = [CChar](repeating: 0, count: 128)
        let opened = kiln_png_rows_open(base.assumingMemoryBound(to: UInt8.self), bytes.count, &handle,
                                        &width, &height, &channels, &message, message.count)
        guard opened >= 0 else { throw .corrupt(Self.text(message)) }
        guard opened == 1, let handle else { return nil }
        defer { kiln_png_rows_close(handle) }
        var shrinker = BoxShrinker(width: Int(width), height: Int(height), channels: Int(channels), k: k)
        var row = [UInt8](repeating: 0, count: Int(width) * Int(channels))
        for _ in 0..<Int(height) {
            let status = row.withUnsafeMutableBufferPointer { kiln_png_rows_read(handle, $0.baseAddress) }
            guard status == 0 else {
                throw .corrupt(String(cString: kiln_png_rows_message(handle)))
            }
            shrinker.add(row)
        }
        return shrinker.result()
    }

    private static func text(_ message: [CChar]) -> String {
        let s = String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return s.isEmpty ? "libpng could not read the image" : s
    }
}

/// Averages rows of 8-bit RGB or RGBA, fed top to bottom, over boxes of `k.x × k.y` pixels.
/// Holds one accumulator row and the output; RGBA is summed premultiplied.
struct BoxShrinker {
    let width: Int, height: Int, channels: Int
    let k: (x: Int, y: Int)
    let outWidth: Int, outHeight: Int
    private var acc: [UInt64]
    private var rowsInBox = 0
    private var outRow = 0
    private var output: [UInt8]

    init(width: Int, height: Int, channels: Int, k: (x: Int, y: Int)) {
        self.width = width
        self.height = height
        self.channels = channels
        self.k = k
        outWidth = (width + k.x - 1) / k.x
        outHeight = (height + k.y - 1) / k.y
        acc = [UInt64](repeating: 0, count: outWidth * 4)
        output = [UInt8](repeating: 0, count: outWidth * outHeight * channels)
    }

    /// Adds the next source row (`width * channels` bytes).
    mutating func add(_ row: [UInt8]) {
        let (kx, c, w) = (k.x, channels, width)
        acc.withUnsafeMutableBufferPointer { a in
            row.withUnsafeBufferPointer { r in
                for box in 0..<outWidth {
                    let start = box * kx, end = min(start + kx, w)
                    var s0: UInt64 = 0, s1: UInt64 = 0, s2: UInt64 = 0, s3: UInt64 = 0
                    if c == 4 {
                        for x in start..<end {
                            let p = x * 4, al = UInt64(r[p + 3])
                            s0 += UInt64(r[p]) * al; s1 += UInt64(r[p + 1]) * al; s2 += UInt64(r[p + 2]) * al; s3 += al
                        }
                    } else {
                        for x in start..<end {
                            let p = x * 3
                            s0 += UInt64(r[p]); s1 += UInt64(r[p + 1]); s2 += UInt64(r[p + 2])
                        }
                    }
                    let q = box * 4
                    a[q] += s0; a[q + 1] += s1; a[q + 2] += s2; a[q + 3] += s3
                }
            }
        }
        rowsInBox += 1
        let lastRow = (outRow + 1) * k.y >= height ? height - outRow * k.y : k.y
        if rowsInBox == lastRow { flush(rows: rowsInBox) }
    }

    /// Writes the accumulated box row as output row `outRow` and clears the sums.
    private mutating func flush(rows: Int) {
        let (kx, c, w, y) = (k.x, channels, width, outRow)
        acc.withUnsafeMutableBufferPointer { a in
            output.withUnsafeMutableBufferPointer { o in
                for box in 0..<outWidth {
                    let n = UInt64((min(box * kx + kx, w) - box * kx) * rows)
                    let q = box * 4, d = (y * outWidth + box) * c
                    if c == 4 {
                        let alphaSum = a[q + 3]
                        if alphaSum == 0 {
                            o[d] = 0; o[d + 1] = 0; o[d + 2] = 0; o[d + 3] = 0
                        } else {
                            o[d] = UInt8(min(255, (a[q] + alphaSum / 2) / alphaSum))
                            o[d + 1] = UInt8(min(255, (a[q + 1] + alphaSum / 2) / alphaSum))
                            o[d + 2] = UInt8(min(255, (a[q + 2] + alphaSum / 2) / alphaSum))
                            o[d + 3] = UInt8(min(255, (alphaSum + n / 2) / n))
                        }
                    } else {
                        o[d] = UInt8(min(255, (a[q] + n / 2) / n))
                        o[d + 1] = UInt8(min(255, (a[q + 1] + n / 2) / n))
                        o[d + 2] = UInt8(min(255, (a[q + 2] + n / 2) / n))
                    }
                    a[q] = 0; a[q + 1] = 0; a[q + 2] = 0; a[q + 3] = 0
                }
            }
        }
        rowsInBox = 0
        outRow += 1
    }

    /// The shrunk image (call after every row was added).
    func result() -> PixelBuffer {
        PixelBuffer(width: outWidth, height: outHeight, channels: channels, pixels: output)
    }
}
