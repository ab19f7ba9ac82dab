/// The horizontal pass of `Resampler`: one source row of bytes in, one row of floats out.
///
/// Each source row is first widened to `SIMD4<Float>` pixels (premultiplied by alpha when
/// asked), so a tap is one vector multiply-add for RGB and RGBA alike; the weights are splatted
/// to four lanes once, up front. Plain `acc += w * x` keeps the loop vectorised (`addProduct`
/// does not without an FMA target). Index arithmetic wraps (`&*`, `&+`): the table bounds it.
struct HorizontalFilter: ~Copyable {
    let channels: Int
    let outputWidth: Int
    let taps: Int
    let premultiply: Bool
    /// First source column any output pixel reads, and how many columns are read.
    let firstColumn: Int
    let columnCount: Int
    /// Per output pixel, its first tap as an index into `row` (relative to `firstColumn`).
    private let starts: UnsafeMutablePointer<Int>
    /// `outputWidth * taps` weights, each in all four lanes.
    private let weights: UnsafeMutablePointer<SIMD4<Float>>
    /// Scratch: the widened source row.
    private let row: UnsafeMutablePointer<SIMD4<Float>>

    init(table: WeightTable, channels: Int, premultiply: Bool) {
        self.channels = channels
        self.outputWidth = table.count
        self.taps = table.taps
        self.premultiply = premultiply
        let columns = table.sourceRange
        firstColumn = columns.lowerBound
        columnCount = columns.count
        starts = .allocate(capacity: table.count)
        for (i, s) in table.starts.enumerated() { starts[i] = s - columns.lowerBound }
        weights = .allocate(capacity: table.weights.count)
        for (i, w) in table.weights.enumerated() { weights[i] = SIMD4(repeating: w) }
        row = .allocate(capacity: max(columns.count, 1))
    }

    deinit {
        starts.deallocate()
        weights.deallocate()
        row.deallocate()
    }

    /// Filters the source row starting at `source` (its column 0) into `outputWidth * channels`
    /// floats at `destination`.
    func filter(_ source: UnsafePointer<UInt8>, into destination: UnsafeMutablePointer<Float>) {
        widen(source + firstColumn * channels)
        if channels == 4 {
            // The destination is plain Float storage: store without assuming 16-byte alignment.
            let raw = UnsafeMutableRawPointer(destination)
            for x in 0..<outputWidth {
                let acc = dot(row + starts[x], weights + x &* taps)
                raw.storeBytes(of: acc, toByteOffset: x &* 16, as: SIMD4<Float>.self)
            }
        } else {
            for x in 0..<outputWidth {
                let acc = dot(row + starts[x], weights + x &* taps)
                let d = destination + x &* 3
                d[0] = acc.x
                d[1] = acc.y
                d[2] = acc.z
            }
        }
    }

    /// `sum(weights[t] * pixels[t])` over `taps` pixels, in two independent accumulators.
    @inline(__always)
    private func dot(_ pixels: UnsafeMutablePointer<SIMD4<Float>>,
                     _ weights: UnsafeMutablePointer<SIMD4<Float>>) -> SIMD4<Float> {
        var acc0 = SIMD4<Float>.zero
        var acc1 = SIMD4<Float>.zero
        var t = 0
        while t &+ 1 < taps {
            acc0 += weights[t] * pixels[t]
            acc1 += weights[t &+ 1] * pixels[t &+ 1]
            t &+= 2
        }
        if t < taps { acc0 += weights[t] * pixels[t] }
        return acc0 + acc1
    }

    /// Converts `columnCount` pixels of 3 or 4 bytes into `row`, premultiplying if asked.
    ///
    /// Reads four bytes per pixel as one vector and converts them in one go. For RGB the fourth
    /// lane holds the next pixel's red, which nothing reads (only three lanes are stored); the
    /// last pixel is read byte by byte so no read goes past the row.
    @inline(__always)
    private func widen(_ src: UnsafePointer<UInt8>) {
        let count = columnCount
        let raw = UnsafeRawPointer(src)
        if channels == 3 {
            for i in 0..<(count - 1) {
                row[i] = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: i &* 3, as: SIMD4<UInt8>.self))
            }
            let p = src + (count - 1) * 3
            row[count - 1] = SIMD4(Float(p[0]), Float(p[1]), Float(p[2]), 0)
        } else if premultiply {
            let scale = SIMD4<Float>(1 / 255, 1 / 255, 1 / 255, 0)
            let keepAlpha = SIMD4<Float>(0, 0, 0, 1)
            for i in 0..<count {
                let v = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<UInt8>.self))
                // (r, g, b, a) * (a/255, a/255, a/255, 1)
                row[i] = v * (SIMD4(repeating: v.w) * scale + keepAlpha)
            }
        } else {
            for i in 0..<count {
                row[i] = SIMD4<Float>(raw.loadUnaligned(fromByteOffset: i &* 4, as: SIMD4<UInt8>.self))
            }
        }
    }
}
