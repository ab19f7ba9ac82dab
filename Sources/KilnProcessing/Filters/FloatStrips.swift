import KilnModel

/// Blur and sharpen over vertical strips of the image, so that their float intermediates stay
/// small (issue 14): a whole 12 MP RGB photo as floats is 144 MB per copy, and blur holds two
/// copies, sharpen three; a strip of a few hundred columns is a few MB to a few tens of MB.
///
/// A strip is converted to floats with `halo` extra columns on each side (clipped at the image's
/// edges), filtered as a whole image, and only its middle columns are written back. The passes
/// of the separable blur spread values sideways by at most their radii (the Gaussian kernel's
/// `ceil(3σ)`, or the three boxes' radii summed), so the middle columns see exactly the
/// neighbours they would see in the whole image; at the image's own edges the strip's edge is
/// the image's, and clamp-to-edge works as before. The vertical passes are the same column by
/// column. The only difference from a whole-image pass is the order of the float additions in the
/// horizontal box's running sum (it starts at the strip's first column), far below a byte's step.
enum FloatStrips {
    /// Floats per strip buffer the strip width aims for (16 MiB).
    static let targetSamples = 4 << 20
    /// Fewest kept columns per strip (the halo may be wider for large sigmas).
    static let minimumKept = 64

    /// Columns kept per strip for an image of `height` rows and `channels`, `halo` each side.
    static func keptWidth(width: Int, height: Int, channels: Int, halo: Int) -> Int {
        let columns = targetSamples / max(1, height * channels)
        return min(width, max(minimumKept, columns - 2 * halo))
    }

    /// Bytes of one strip's floats (halo included) for `image`.
    static func stripBytes(width: Int, height: Int, channels: Int, halo: Int) -> Int {
        let kept = keptWidth(width: width, height: height, channels: channels, halo: halo)
        return min(width, kept + 2 * halo) * height * channels * 4
    }

    /// Calls `body` with each strip as a `FloatImage` (premultiplied like `FloatImage(_:)`) to
    /// filter in place, and with an unfiltered copy of it when `keepOriginal`; assembles the kept
    /// columns of the filtered strips into the 8-bit result.
    static func map(_ image: PixelBuffer, halo: Int, keepOriginal: Bool = false,
                    _ body: (_ strip: inout FloatImage, _ original: FloatImage?) -> Void) -> PixelBuffer {
        let w = image.width, h = image.height, c = image.channels
        let kept = keptWidth(width: w, height: h, channels: c, halo: halo)
        var out = [UInt8](repeating: 0, count: w * h * c)
        var start = 0
        while start < w {
            let end = min(w, start + kept)
            let x0 = max(0, start - halo), x1 = min(w, end + halo)
            var strip = FloatImage(image, columns: x0..<x1)
            if keepOriginal {
                let original = strip
                body(&strip, original)
            } else {
                body(&strip, nil)
            }
            strip.store(columns: (start - x0)..<(end - x0), into: &out, imageWidth: w, at: start)
            start = end
        }
        return PixelBuffer(width: w, height: h, channels: c, pixels: out)
    }
}

extension FloatImage {
    /// Samples of columns `columns` of `image`, premultiplied when it has alpha (as `init(_:)`).
    init(_ image: PixelBuffer, columns: Range<Int>) {
        if columns == 0..<image.width {
            self.init(image)
            return
        }
        let c = image.channels, sw = columns.count
        let premultiply = image.hasAlpha && !image.isPremultiplied
        let rowLength = sw * c, srcRow = image.rowBytes, h = image.height
        let samples = [Float](unsafeUninitializedCapacity: rowLength * h) { dst, initialised in
            image.pixels.withUnsafeBufferPointer { src in
                for y in 0..<h {
                    let s = y * srcRow + columns.lowerBound * c, d = y * rowLength
                    if premultiply {
                        var i = 0
                        while i < rowLength {
                            let a = Float(src[s + i + 3])
                            let k = a * (1 / 255)
                            dst[d + i] = Float(src[s + i]) * k
                            dst[d + i + 1] = Float(src[s + i + 1]) * k
                            dst[d + i + 2] = Float(src[s + i + 2]) * k
                            dst[d + i + 3] = a
                            i += 4
                        }
                    } else {
                        for i in 0..<rowLength { dst[d + i] = Float(src[s + i]) }
                    }
                }
            }
            initialised = rowLength * h
        }
        self.init(width: sw, height: h, channels: c, samples: samples)
    }

    /// Writes columns `columns` of this image as bytes (as `pixelBuffer()` does) into `out`, an
    /// image `imageWidth` pixels wide, starting at column `x`.
    func store(columns: Range<Int>, into out: inout [UInt8], imageWidth: Int, at x: Int) {
        let c = channels, n = columns.count * c, outRow = imageWidth * c
        let alpha = c == 4
        samples.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let s = y * rowLength + columns.lowerBound * c, d = y * outRow + x * c
                    if alpha {
                        var i = 0
                        while i < n {
                            let a = Self.clamp(src[s + i + 3])
                            if a < 0.5 {
                                dst[d + i] = 0; dst[d + i + 1] = 0; dst[d + i + 2] = 0; dst[d + i + 3] = 0
                            } else {
                                let k = 255 / a
                                dst[d + i] = Self.byte(src[s + i] * k)
                                dst[d + i + 1] = Self.byte(src[s + i + 1] * k)
                                dst[d + i + 2] = Self.byte(src[s + i + 2] * k)
                                dst[d + i + 3] = Self.byte(a)
                            }
                            i += 4
                        }
                    } else {
                        for i in 0..<n { dst[d + i] = Self.byte(src[s + i]) }
                    }
                }
            }
        }
    }
}
