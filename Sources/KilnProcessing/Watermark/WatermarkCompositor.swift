import KilnModel

/// Places a watermark and blends it, source-over in premultiplied sRGB:
///
///     s = mark × opacity                    (premultiplied colour and alpha, 0...1)
///     out.colour = s.colour + dst.colour × (1 − s.alpha)      (dst premultiplied)
///     out.alpha  = s.alpha  + dst.alpha  × (1 − s.alpha)
///
/// RGB images are opaque (alpha 1, so they stay RGB); straight RGBA is premultiplied around the
/// blend and divided back after; premultiplied RGBA stays so. Each channel is rounded once, at
/// the end (at most 0.5 off the exact value).
public enum WatermarkCompositor {
    /// The top-left corner of a mark of `mark` pixels on a canvas of `canvas` pixels for a compass
    /// gravity: edges the gravity names are `x` / `y` pixels in, a centred axis is shifted by them
    /// (right / down) from the centre (rounded down).
    public static func origin(canvas: PixelSize, mark: PixelSize, gravity: Gravity, x: Int, y: Int) -> (x: Int, y: Int) {
        let (ax, ay) = gravity.anchor ?? (0.5, 0.5)
        func place(_ extent: Int, _ size: Int, _ anchor: Double, _ offset: Int) -> Int {
            if anchor == 0 { return offset }
            if anchor == 1 { return extent - size - offset }
            return (extent - size) >> 1 + offset   // >> rounds down for negatives too
        }
        return (place(canvas.width, mark.width, ax, x), place(canvas.height, mark.height, ay, y))
    }

    /// The tiles' top-left corners along one axis: from 0, `size + gap` apart, while on the canvas.
    public static func tileStarts(extent: Int, size: Int, gap: Int) -> [Int] {
        guard size > 0 else { return [] }
        return Array(stride(from: 0, to: extent, by: size + max(0, gap)))
    }

    /// `image` with `mark` (premultiplied RGBA) blended at `position`.
    public static func composite(_ mark: PixelBuffer, onto image: PixelBuffer, position: WatermarkOptions.Position,
                                 x: Int, y: Int, opacity: Double) -> PixelBuffer {
        precondition(mark.channels == 4 && mark.isPremultiplied, "the mark is premultiplied RGBA")
        var out = image
        switch position {
        case .gravity(let g):
            let o = origin(canvas: image.size, mark: mark.size, gravity: g, x: x, y: y)
            blend(mark, into: &out, at: o, opacity: Float(opacity))
        case .tile:
            for ty in tileStarts(extent: image.height, size: mark.height, gap: y) {
                for tx in tileStarts(extent: image.width, size: mark.width, gap: x) {
                    blend(mark, into: &out, at: (tx, ty), opacity: Float(opacity))
                }
            }
        }
        return out
    }

    /// Blends `mark` into `image` with its top-left corner at `origin`; the parts off the image
    /// are clipped.
    static func blend(_ mark: PixelBuffer, into image: inout PixelBuffer, at origin: (x: Int, y: Int), opacity: Float) {
        let x0 = max(0, origin.x), x1 = min(image.width, origin.x + mark.width)
        let y0 = max(0, origin.y), y1 = min(image.height, origin.y + mark.height)
        guard x0 < x1, y0 < y1 else { return }
        let c = image.channels
        let straight = c == 4 && !image.isPremultiplied
        let m = mark.pixels
        let scale = opacity / 255
        for py in y0..<y1 {
            let markRow = (py - origin.y) * mark.width
            let row = py * image.width
            for px in x0..<x1 {
                let mi = (markRow + px - origin.x) * 4
                let ma = m[mi + 3]
                if ma == 0 { continue }
                let sa = Float(ma) * scale   // 0...1
                let keep = 1 - sa
                let di = (row + px) * c
                if c == 3 {
                    for k in 0..<3 {
                        image.pixels[di + k] = rounded(Float(m[mi + k]) * opacity + Float(image.pixels[di + k]) * keep)
                    }
                    continue
                }
                let da = Float(image.pixels[di + 3])
                let outA = sa * 255 + da * keep
                for k in 0..<3 {
                    var d = Float(image.pixels[di + k])
                    if straight { d = d * da / 255 }
                    let v = Float(m[mi + k]) * opacity + d * keep
                    image.pixels[di + k] = straight ? (outA > 0 ? rounded(v * 255 / outA) : 0) : rounded(min(v, outA))
                }
                image.pixels[di + 3] = rounded(outA)
            }
        }
    }

    @inline(__always)
    static func rounded(_ v: Float) -> UInt8 {
        UInt8(min(255, max(0, v + 0.5)))
    }
}
