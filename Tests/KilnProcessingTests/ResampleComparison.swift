import KilnModel
@testable import KilnProcessing

/// How far one resample's bytes are from another's (the fixed-point kernel against the float
/// reference): the largest difference per channel and the mean SSIM per channel.
struct ResampleComparison: CustomStringConvertible {
    /// Largest absolute difference, per channel.
    var maxDifference: [Int]
    /// Mean SSIM (8×8 windows, step 4), per channel.
    var ssim: [Double]

    var worstDifference: Int { maxDifference.max() ?? 0 }
    var worstSSIM: Double { ssim.min() ?? 1 }
    var description: String {
        "max diff \(maxDifference), SSIM \(ssim.map { String(Double(Int($0 * 100_000)) / 100_000) })"
    }

    /// Compares `a` and `b` (same size, `channels` interleaved). For straight RGBA pass
    /// `straightAlpha`: colour is compared premultiplied (c × a / 255), because dividing by a
    /// small alpha magnifies any rounding (at alpha 3 one step of premultiplied colour is 85).
    init(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int, channels: Int, straightAlpha: Bool = false) {
        precondition(a.count == b.count && a.count == width * height * channels)
        func plane(_ p: [UInt8], _ c: Int) -> [Double] {
            (0..<(width * height)).map { i in
                let v = Double(p[i * channels + c])
                return straightAlpha && c < 3 ? (v * Double(p[i * channels + 3]) / 255).rounded() : v
            }
        }
        var diffs = [Int](), scores = [Double]()
        for c in 0..<channels {
            let pa = plane(a, c), pb = plane(b, c)
            diffs.append(Int(zip(pa, pb).map { abs($0 - $1) }.max() ?? 0))
            scores.append(Self.ssim(pa, pb, width: width, height: height))
        }
        maxDifference = diffs
        ssim = scores
    }

    init(_ a: PixelBuffer, _ b: PixelBuffer) {
        precondition(a.size == b.size && a.channels == b.channels)
        self.init(a.pixels, b.pixels, width: a.width, height: a.height, channels: a.channels,
                  straightAlpha: a.hasAlpha && !a.isPremultiplied)
    }

    /// Mean SSIM of two planes over 8×8 windows every 4 pixels (the whole plane when smaller).
    static func ssim(_ x: [Double], _ y: [Double], width: Int, height: Int) -> Double {
        let c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255)
        let win = 8
        let wx = min(win, width), wy = min(win, height)
        var total = 0.0, windows = 0
        var y0 = 0
        while y0 + wy <= height {
            var x0 = 0
            while x0 + wx <= width {
                var sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0
                for yy in y0..<(y0 + wy) {
                    for xx in x0..<(x0 + wx) {
                        let a = x[yy * width + xx], b = y[yy * width + xx]
                        sx += a; sy += b; sxx += a * a; syy += b * b; sxy += a * b
                    }
                }
                let n = Double(wx * wy)
                let mx = sx / n, my = sy / n
                let vx = sxx / n - mx * mx, vy = syy / n - my * my, cov = sxy / n - mx * my
                total += ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
                windows += 1
                x0 += 4
            }
            y0 += 4
        }
        return total / Double(windows)
    }
}

extension PixelBuffer {
    /// This straight RGBA image premultiplied (rounded), flagged as such.
    var premultiplied: PixelBuffer {
        precondition(channels == 4 && !isPremultiplied)
        var p = pixels
        for i in stride(from: 0, to: p.count, by: 4) {
            let a = Int(p[i + 3])
            for c in 0..<3 { p[i + c] = UInt8((Int(p[i + c]) * a + 127) / 255) }
        }
        return PixelBuffer(width: width, height: height, channels: 4, isPremultiplied: true, pixels: p)
    }
}
