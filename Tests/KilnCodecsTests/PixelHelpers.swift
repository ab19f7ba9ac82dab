import KilnModel

/// Pixel helpers for the codec tests.
enum PixelHelpers {
    /// Mean absolute difference over the RGB channels of two buffers of the same size (alpha ignored).
    static func meanAbsDiff(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.width == b.width && a.height == b.height, "sizes differ")
        var total = 0
        for index in 0..<a.pixelCount {
            for channel in 0..<3 {
                total += abs(Int(a.pixels[index * a.channels + channel]) - Int(b.pixels[index * b.channels + channel]))
            }
        }
        return Double(total) / Double(a.pixelCount * 3)
    }

    /// A smooth colour gradient with an optional alpha ramp, for encoder round trips.
    static func gradient(width: Int, height: Int, channels: Int) -> PixelBuffer {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * channels
                pixels[i] = UInt8(x * 255 / max(width - 1, 1))
                pixels[i + 1] = UInt8(y * 255 / max(height - 1, 1))
                pixels[i + 2] = UInt8((x + y) * 255 / max(width + height - 2, 1))
                if channels == 4 { pixels[i + 3] = UInt8((x * 7 + y * 3) % 256) }
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// Applies EXIF orientation 1...8 (the transform that makes the stored image display upright).
    static func oriented(_ image: PixelBuffer, _ orientation: Int) -> PixelBuffer {
        let w = image.width, h = image.height, c = image.channels
        let transposes = orientation >= 5
        let outW = transposes ? h : w, outH = transposes ? w : h
        var out = [UInt8](repeating: 0, count: image.pixels.count)
        for y in 0..<outH {
            for x in 0..<outW {
                let (sx, sy): (Int, Int)
                switch orientation {
                case 2: (sx, sy) = (w - 1 - x, y)
                case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                case 4: (sx, sy) = (x, h - 1 - y)
                case 5: (sx, sy) = (y, x)
                case 6: (sx, sy) = (y, h - 1 - x)
                case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                case 8: (sx, sy) = (w - 1 - y, x)
                default: (sx, sy) = (x, y)
                }
                for k in 0..<c { out[(y * outW + x) * c + k] = image.pixels[(sy * w + sx) * c + k] }
            }
        }
        return PixelBuffer(width: outW, height: outH, channels: c, pixels: out)
    }
}

extension PixelHelpers {
    /// A 2×2 box reduction (odd edges rounded up), colour weighted by alpha when there is alpha.
    static func boxHalved(_ image: PixelBuffer) -> PixelBuffer {
        let w = (image.width + 1) / 2, h = (image.height + 1) / 2, c = image.channels
        var out = [UInt8](repeating: 0, count: w * h * c)
        for y in 0..<h {
            for x in 0..<w {
                var sums = [Int](repeating: 0, count: 4), alpha = 0, n = 0
                for dy in 0..<2 { for dx in 0..<2 {
                    let sx = min(2 * x + dx, image.width - 1), sy = min(2 * y + dy, image.height - 1)
                    let i = (sy * image.width + sx) * c
                    let a = c == 4 ? Int(image.pixels[i + 3]) : 255
                    for k in 0..<3 { sums[k] += Int(image.pixels[i + k]) * a }
                    alpha += a
                    n += 1
                } }
                let o = (y * w + x) * c
                for k in 0..<3 { out[o + k] = alpha > 0 ? UInt8((sums[k] + alpha / 2) / alpha) : 0 }
                if c == 4 { out[o + 3] = UInt8((alpha + n / 2) / n) }
            }
        }
        return PixelBuffer(width: w, height: h, channels: c, pixels: out)
    }
}
