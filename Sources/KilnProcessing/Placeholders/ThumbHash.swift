import Glibc
import KilnModel

/// ThumbHash (Evan Wallace, https://github.com/evanw/thumbhash; a port of the reference
/// JavaScript `rgbaToThumbHash`): luminance, two chroma channels and alpha as a few DCT terms,
/// with the aspect ratio, in about 25 bytes. Takes an image of at most 100 × 100 pixels
/// (`Placeholders` shrinks to that); RGB is not premultiplied.
public enum ThumbHash {
    /// The hash bytes of `image` (at most 100 × 100; a larger one is a programming error).
    public static func encode(_ image: PixelBuffer) -> [UInt8] {
        let w = image.width, h = image.height, ch = image.channels
        precondition(w <= 100 && h <= 100 && w > 0 && h > 0, "ThumbHash encodes at most 100x100 pixels")
        let n = w * h
        func alphaAt(_ i: Int) -> Double { ch == 4 ? Double(image.pixels[i * 4 + 3]) / 255 : 1 }
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        for i in 0..<n {
            let alpha = alphaAt(i), o = i * ch
            avgR += alpha / 255 * Double(image.pixels[o])
            avgG += alpha / 255 * Double(image.pixels[o + 1])
            avgB += alpha / 255 * Double(image.pixels[o + 2])
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(n)
        let lLimit = hasAlpha ? 5.0 : 7.0
        let longest = Double(max(w, h))
        let lx = max(1, round(lLimit * Double(w) / longest))
        let ly = max(1, round(lLimit * Double(h) / longest))
        var l = [Double](repeating: 0, count: n), p = l, q = l, a = l
        for i in 0..<n {
            let alpha = alphaAt(i), o = i * ch
            let r = avgR * (1 - alpha) + alpha / 255 * Double(image.pixels[o])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(image.pixels[o + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(image.pixels[o + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }
        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0, ac: [Double] = [], scale = 0.0
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lEnc = encodeChannel(l, max(3, Int(lx)), max(3, Int(ly)))
        let pEnc = encodeChannel(p, 3, 3)
        let qEnc = encodeChannel(q, 3, 3)
        let aEnc = hasAlpha ? encodeChannel(a, 5, 5) : (dc: 0, ac: [], scale: 0)

        let isLandscape = w > h
        let header24 = Int(round(63 * lEnc.dc)) | Int(round(31.5 + 31.5 * pEnc.dc)) << 6 | Int(round(31.5 + 31.5 * qEnc.dc)) << 12
            | Int(round(31 * lEnc.scale)) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 = Int(isLandscape ? ly : lx) | Int(round(63 * pEnc.scale)) << 3 | Int(round(63 * qEnc.scale)) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8((header24 >> 16) & 255),
                             UInt8(header16 & 255), UInt8((header16 >> 8) & 255)]
        let acStart = hasAlpha ? 6 : 5
        if hasAlpha { hash.append(UInt8(Int(round(15 * aEnc.dc)) | Int(round(15 * aEnc.scale)) << 4)) }
        var acIndex = 0
        for ac in hasAlpha ? [lEnc.ac, pEnc.ac, qEnc.ac, aEnc.ac] : [lEnc.ac, pEnc.ac, qEnc.ac] {
            for f in ac {
                let at = acStart + (acIndex >> 1)
                while hash.count <= at { hash.append(0) }
                hash[at] |= UInt8(Int(round(15 * f)) << ((acIndex & 1) << 2))
                acIndex += 1
            }
        }
        return hash
    }

    /// JavaScript's `Math.round`: halves round up (towards +∞), unlike Swift's `.rounded()`.
    static func round(_ v: Double) -> Double { (v + 0.5).rounded(.down) }
}
