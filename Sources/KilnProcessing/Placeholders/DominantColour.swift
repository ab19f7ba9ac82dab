import KilnModel

/// The dominant colour of an image: the pixels are counted in a 16 × 16 × 16 grid of RGB cells
/// (4 bits a channel), and the answer is the mean colour of the pixels in the fullest cell (ties:
/// the cell with the lowest index). Pixels with alpha below 128 are not counted; nil when no
/// pixel is. A histogram's mode rather than the mean: a photo of a red car on grey tarmac
/// answers grey, not a brownish average no pixel has.
public enum DominantColour {
    public static func of(_ image: PixelBuffer) -> RGBColor? {
        var counts = [Int](repeating: 0, count: 4096)
        var sums = [Int](repeating: 0, count: 4096 * 3)
        let ch = image.channels
        var o = 0
        for _ in 0..<image.pixelCount {
            defer { o += ch }
            if ch == 4 && image.pixels[o + 3] < 128 { continue }
            let r = Int(image.pixels[o]), g = Int(image.pixels[o + 1]), b = Int(image.pixels[o + 2])
            let cell = (r >> 4) << 8 | (g >> 4) << 4 | b >> 4
            counts[cell] += 1
            sums[cell * 3] += r
            sums[cell * 3 + 1] += g
            sums[cell * 3 + 2] += b
        }
        var best = 0
        for cell in 1..<4096 where counts[cell] > counts[best] { best = cell }
        let n = counts[best]
        guard n > 0 else { return nil }
        func mean(_ s: Int) -> UInt8 { UInt8((s + n / 2) / n) }
        return RGBColor(red: mean(sums[best * 3]), green: mean(sums[best * 3 + 1]), blue: mean(sums[best * 3 + 2]))
    }
}
