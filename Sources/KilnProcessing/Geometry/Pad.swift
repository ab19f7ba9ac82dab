import KilnModel

/// `pad:<t>:<r>:<b>:<l>`: adds borders around the image.
///
/// With a background colour (the request's `bg:`) the borders are that colour, opaque, and the
/// image keeps its channel count. Without one they are transparent black and the result is RGBA
/// (an RGB input gains an opaque alpha channel); a JPEG output is then flattened on the output
/// background as usual. A result over `context.maxOutputPixels` is refused with `overLimit`.
public struct Pad: ImageProcessing, Sendable, Hashable {
    public var padding: Padding

    public init(_ padding: Padding) {
        self.padding = padding
    }

    public var identifier: String { Operation.pad(padding).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        let p = padding
        guard p.top >= 0, p.right >= 0, p.bottom >= 0, p.left >= 0 else {
            throw .invalidArgument(option: "pad", reason: "padding must not be negative")
        }
        if p.top == 0, p.right == 0, p.bottom == 0, p.left == 0 { return image }
        let width = image.width + p.left + p.right, height = image.height + p.top + p.bottom
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= context.maxOutputPixels else {
            throw .overLimit("pad to \(width)x\(height) is over the limit of \(context.maxOutputPixels) output pixels")
        }
        let source = p.background == nil ? Self.withAlpha(image) : image
        let c = source.channels
        let fill: [UInt8] = p.background.map { c == 4 ? $0.bytes + [255] : $0.bytes } ?? [0, 0, 0, 0]
        let dstRow = width * c, srcRow = source.rowBytes
        let out = [UInt8](unsafeUninitializedCapacity: dstRow * height) { dst, initialised in
            let d = dst.baseAddress!
            // One row of fill colour, copied wherever a border goes.
            let fillRow = UnsafeMutablePointer<UInt8>.allocate(capacity: dstRow)
            defer { fillRow.deallocate() }
            for x in 0..<width {
                for k in 0..<c { fillRow[x * c + k] = fill[k] }
            }
            source.pixels.withUnsafeBufferPointer { src in
                let s = src.baseAddress!
                for y in 0..<height {
                    let row = d + y * dstRow
                    let inside = y >= p.top && y < p.top + source.height
                    guard inside else {
                        row.update(from: fillRow, count: dstRow)
                        continue
                    }
                    row.update(from: fillRow, count: p.left * c)
                    (row + p.left * c).update(from: s + (y - p.top) * srcRow, count: srcRow)
                    (row + p.left * c + srcRow).update(from: fillRow, count: p.right * c)
                }
            }
            initialised = dstRow * height
        }
        return PixelBuffer(width: width, height: height, channels: c,
                           isPremultiplied: source.isPremultiplied, pixels: out)
    }

    /// RGBA: RGB gains alpha 255; RGBA is returned as is.
    static func withAlpha(_ image: PixelBuffer) -> PixelBuffer {
        guard !image.hasAlpha else { return image }
        let n = image.pixelCount
        let out = [UInt8](unsafeUninitializedCapacity: n * 4) { dst, initialised in
            image.pixels.withUnsafeBufferPointer { src in
                for i in 0..<n {
                    dst[i * 4] = src[i * 3]
                    dst[i * 4 + 1] = src[i * 3 + 1]
                    dst[i * 4 + 2] = src[i * 3 + 2]
                    dst[i * 4 + 3] = 255
                }
            }
            initialised = n * 4
        }
        return PixelBuffer(width: image.width, height: image.height, channels: 4, pixels: out)
    }
}
