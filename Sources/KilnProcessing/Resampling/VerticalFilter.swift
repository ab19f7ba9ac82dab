/// The vertical pass of `Resampler`: a window of filtered rows in, one row of bytes out.
///
/// Accumulates the window's rows, weighted, into a float row (two rows per sweep, which halves
/// the trips through the accumulator and vectorises over the whole row), then rounds, clamps
/// and, for straight-alpha RGBA, unpremultiplies.
struct VerticalFilter: ~Copyable {
    /// Floats (and output bytes) per row: output width times channels.
    let rowLength: Int
    let alpha: Resampler.AlphaHandling
    private let acc: UnsafeMutablePointer<Float>

    init(rowLength: Int, alpha: Resampler.AlphaHandling) {
        self.rowLength = rowLength
        self.alpha = alpha
        acc = .allocate(capacity: max(rowLength, 1))
    }

    deinit { acc.deallocate() }

    /// Writes `sum(weights[t] * rows[t])` over `taps` rows, as bytes, to `destination`.
    func filter(_ rows: UnsafePointer<UnsafePointer<Float>>, weights w: UnsafePointer<Float>,
                taps: Int, into destination: UnsafeMutablePointer<UInt8>) {
        let n = rowLength
        let w0 = w[0], first = rows[0]
        for i in 0..<n { acc[i] = w0 * first[i] }
        var t = 1
        while t + 1 < taps {
            let wa = w[t], wb = w[t + 1]
            let a = rows[t], b = rows[t + 1]
            for i in 0..<n { acc[i] += wa * a[i] + wb * b[i] }
            t += 2
        }
        if t < taps {
            let wa = w[t], a = rows[t]
            for i in 0..<n { acc[i] += wa * a[i] }
        }
        store(into: destination)
    }

    /// Rounds and clamps the accumulated row into bytes.
    @inline(__always)
    private func store(into dst: UnsafeMutablePointer<UInt8>) {
        let n = rowLength
        switch alpha {
        case .none:
            for i in 0..<n { dst[i] = Self.toByte(acc[i]) }
        case .keepPremultiplied:
            var i = 0
            while i < n {
                let a = Self.toByte(acc[i + 3])
                dst[i] = min(Self.toByte(acc[i]), a)
                dst[i + 1] = min(Self.toByte(acc[i + 1]), a)
                dst[i + 2] = min(Self.toByte(acc[i + 2]), a)
                dst[i + 3] = a
                i += 4
            }
        case .premultiplyAround:
            var i = 0
            while i < n {
                let aValue = acc[i + 3]
                let a = Self.toByte(aValue)
                if a == 0 {
                    dst[i] = 0; dst[i + 1] = 0; dst[i + 2] = 0; dst[i + 3] = 0
                } else {
                    // Divide by the unclamped alpha: ringing moves colour and alpha together.
                    let f = 255 / aValue
                    dst[i] = Self.toByte(acc[i] * f)
                    dst[i + 1] = Self.toByte(acc[i + 1] * f)
                    dst[i + 2] = Self.toByte(acc[i + 2] * f)
                    dst[i + 3] = a
                }
                i += 4
            }
        }
    }

    /// Round to nearest and clamp to 0...255 (Lanczos rings past both ends).
    @inline(__always)
    static func toByte(_ v: Float) -> UInt8 {
        // floor(min(max(v + 0.5, 0), 255)), without `UInt8(Float)`: its range check keeps the
        // store loops from vectorising under -O. Adding and subtracting 2^23 rounds a float in
        // 0..<2^23 to the nearest integer (ties to even); one step down where that went up
        // makes it the floor; the low byte of (integer + 2^23)'s bits is the integer itself.
        let magic: Float = 8_388_608
        let x = min(max(v + 0.5, 0), 255)
        let nearest = (x + magic) - magic
        let floor = nearest > x ? nearest - 1 : nearest
        return UInt8(truncatingIfNeeded: (floor + magic).bitPattern)
    }
}
