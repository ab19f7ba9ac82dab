import KilnModel

/// What an encode costs the request budgets (`RequestCost`'s encode step), by format, quality and
/// effort: memory in bytes per output pixel (the encoder's working set and its output) and work in
/// megapixel-passes per output megapixel.
///
/// Measured with `kiln process` (release build, peak RSS minus the process and the decoded image;
/// wall time minus the decode) on a 3900×2900 JPEG of random noise, the worst case for an encoder
/// (a photo of the same size takes 50–70 % of the time and a little less memory), at the default
/// effort (`output.webp_method` 2, `output.avif_speed` 9):
///
/// | quality | AVIF ms/MP | AVIF B/px | WebP ms/MP | WebP B/px |
/// | --- | --- | --- | --- | --- |
/// | 50 | 155 | 20.4 | 124 | 3.1 |
/// | 80 | 234 | 21.7 | 155 | 3.5 |
/// | 90 | 300 | 22.6 | 164 | 3.8 |
/// | 100 | 460 | 24.1 | 243 | 7.0 |
///
/// WebP's method scales the time (m0 0.75×, m4 1.6×, m5 1.9×, m6 5.3× of m2) and from m3 on keeps
/// about 12.5 B/px more; AVIF's speed as `AVIFEncoder` documents (8: 2.3×, 7: 4×, 6: 8×, below
/// 20×). Between the measured qualities the tables interpolate linearly.
public enum EncoderCost {
    /// Qualities of the table's columns.
    static let qualities: [Double] = [0, 50, 80, 90, 100]
    static let avifWork: [Double] = [12, 15.5, 23.4, 30, 46]
    static let avifBytes: [Double] = [20, 20.5, 22, 23, 25]
    static let webpWork: [Double] = [10, 12.4, 15.5, 16.4, 24.3]
    static let webpBytes: [Double] = [3, 3.2, 3.6, 4, 7]

    /// `table` at `quality` (1...100), linear between the measured columns.
    static func interpolate(_ table: [Double], quality: Int) -> Double {
        let q = Double(min(max(quality, 0), 100))
        guard let upper = qualities.firstIndex(where: { $0 >= q }), upper > 0 else { return table[0] }
        let lower = upper - 1
        let t = (q - qualities[lower]) / (qualities[upper] - qualities[lower])
        return table[lower] + t * (table[upper] - table[lower])
    }

    /// Working set and output per output pixel.
    public static func bytesPerPixel(_ options: EncodeOptions, channels: Int) -> Double {
        switch options.format {
        case .jpeg: return 1
        case .png, .gif, .ico: return 1.5 * Double(channels)
        case .webp:
            if options.lossless { return 30 }
            let methodScratch = options.webpMethod >= 3 ? 12.5 : 0
            return interpolate(webpBytes, quality: options.quality) + methodScratch + (channels == 4 ? 1 : 0)
        case .avif: return interpolate(avifBytes, quality: options.quality)
        case .heic, .svg, .tiff, .bmp, .jxl: return 0   // never an output
        }
    }

    /// A JPEG encode's time against 4:2:0's: `kiln process photo_4000x3000.jpg ss:<n>/q:80/f:jpeg`,
    /// the encode phase, medians of 3 (2026-11-29): 4:2:0 64 ms, 4:4:4 84 ms (1.3×, with twice
    /// the chroma samples: the DCT and entropy coding of the luma plane dominate); 4:2:2 between.
    static func jpegSubsamplingFactor(_ s: ChromaSubsampling) -> Double {
        switch s {
        case .s420: 1
        case .s422: 1.15
        case .s444: 1.3
        }
    }

    /// Megapixel-passes per output megapixel (10 ms each on the reference machine).
    public static func work(_ options: EncodeOptions) -> Double {
        switch options.format {
        case .jpeg: return 1.7 * jpegSubsamplingFactor(options.chromaSubsampling)
        case .png, .ico: return 40
        // Median cut and LZW: 27–36 ms for the 0.36 MP bench photo at 800 px (gif_quantizer.py).
        case .gif: return 10
        case .webp:
            if options.lossless { return 150 }
            let method: [Double] = [0.75, 0.9, 1, 1.6, 1.6, 1.9, 5.3]
            return interpolate(webpWork, quality: options.quality) * method[min(max(options.webpMethod, 0), 6)]
        case .avif:
            let s = options.avifSpeed
            let speed = s >= 9 ? 1 : s == 8 ? 2.3 : s == 7 ? 4 : s == 6 ? 8 : 20
            return interpolate(avifWork, quality: options.quality) * speed * (options.lossless ? 3 : 1)
        case .heic, .svg, .tiff, .bmp, .jxl: return 0
        }
    }
}
