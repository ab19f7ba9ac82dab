import KilnModel

/// Alpha-channel helpers over 8-bit RGBA buffers.
///
/// The resampler premultiplies in floating point on its own; these are for stages that need the
/// bytes converted (an encoder that wants one form or the other) and for the pipeline to drop an
/// alpha channel nobody uses.
public enum Alpha {
    /// True when the buffer has no alpha channel or every alpha value is 255.
    public static func isOpaque(_ image: PixelBuffer) -> Bool {
        guard image.hasAlpha else { return true }
        return image.pixels.withUnsafeBufferPointer { p in
            let count = p.count
            var j = 3
            // AND the alpha bytes of a block together; stop at the first block not all 255.
            while j < count {
                let end = min(j + 4 * 4096, count)
                var all: UInt8 = 255
                while j < end {
                    all &= p[j]
                    j += 4
                }
                if all != 255 { return false }
            }
            return true
        }
    }

    /// RGB with the alpha channel removed (colour kept as stored). RGB input is returned as is.
    ///
    /// Meant for opaque images (`isOpaque`); for translucent ones use `Flatten`.
    public static func droppingAlpha(_ image: PixelBuffer) -> PixelBuffer {
        guard image.hasAlpha else { return image }
        let count = image.pixelCount
        var out = [UInt8](repeating: 0, count: count * 3)
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for i in 0..<count {
                    dst[i * 3] = src[i * 4]
                    dst[i * 3 + 1] = src[i * 4 + 1]
                    dst[i * 3 + 2] = src[i * 4 + 2]
                }
            }
        }
        return PixelBuffer(width: image.width, height: image.height, channels: 3, pixels: out)
    }

    /// Colour multiplied by alpha, rounded: `c * a / 255`. RGB and already premultiplied
    /// buffers are returned as they are.
    public static func premultiplied(_ image: PixelBuffer) -> PixelBuffer {
        guard image.hasAlpha, !image.isPremultiplied else { return image }
        var out = image
        out.isPremultiplied = true
        out.pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a != 255 {
                    p[i] = mulDiv255(UInt32(p[i]), a)
                    p[i + 1] = mulDiv255(UInt32(p[i + 1]), a)
                    p[i + 2] = mulDiv255(UInt32(p[i + 2]), a)
                }
                i += 4
            }
        }
        return out
    }

    /// Colour divided by alpha, rounded and clamped; fully transparent pixels become
    /// transparent black. RGB and straight-alpha buffers are returned as they are.
    public static func unpremultiplied(_ image: PixelBuffer) -> PixelBuffer {
        guard image.hasAlpha, image.isPremultiplied else { return image }
        var out = image
        out.isPremultiplied = false
        out.pixels.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a == 0 {
                    p[i] = 0; p[i + 1] = 0; p[i + 2] = 0
                } else if a != 255 {
                    let half = a / 2
                    p[i] = UInt8(min(255, (UInt32(p[i]) * 255 + half) / a))
                    p[i + 1] = UInt8(min(255, (UInt32(p[i + 1]) * 255 + half) / a))
                    p[i + 2] = UInt8(min(255, (UInt32(p[i + 2]) * 255 + half) / a))
                }
                i += 4
            }
        }
        return out
    }

    /// `round(x * y / 255)` for bytes, exact for all inputs.
    @inline(__always)
    static func mulDiv255(_ x: UInt32, _ y: UInt32) -> UInt8 {
        let t = x * y + 128
        return UInt8((t + (t >> 8)) >> 8)
    }
}
