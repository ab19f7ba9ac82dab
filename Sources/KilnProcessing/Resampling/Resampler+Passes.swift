/// The two inner loops of `Resampler`, over raw buffers.
///
/// Written for the optimiser: fixed tap counts from `WeightTable`, plain `acc += w * x`
/// (which vectorises; `addProduct` does not without an FMA target), no bounds checks in the
/// hot loops (`-Ounchecked` in release builds).
extension Resampler {
    /// Filters source rows `rows` horizontally into `inter`, one row of `table.count * channels`
    /// floats per source row. Each source row is first widened to `SIMD4<Float>` pixels
    /// (premultiplied when asked) so a tap is one vector multiply-add for RGB and RGBA alike.
    static func horizontalPass(source: UnsafeBufferPointer<UInt8>, width: Int, channels: Int,
                               rows: Range<Int>, table: WeightTable, premultiply: Bool,
                               into inter: UnsafeMutableBufferPointer<Float>) {
        let columns = table.sourceRange
        let firstColumn = columns.lowerBound
        let outWidth = table.count
        let taps = table.taps
        let rowLength = outWidth * channels
        let row = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: max(columns.count, 1))
        defer { row.deallocate() }
        let src = source.baseAddress!
        let dstBase = inter.baseAddress!

        table.starts.withUnsafeBufferPointer { startsBuffer in
            table.weights.withUnsafeBufferPointer { weightsBuffer in
                let starts = startsBuffer.baseAddress!
                let weights = weightsBuffer.baseAddress!
                for (r, y) in rows.enumerated() {
                    widen(src + (y * width + firstColumn) * channels, count: columns.count,
                          channels: channels, premultiply: premultiply, into: row)
                    let dst = dstBase + r * rowLength
                    if channels == 4 {
                        for x in 0..<outWidth {
                            let acc = dot(row + (starts[x] - firstColumn), weights + x * taps, taps)
                            (dst + x * 4).withMemoryRebound(to: SIMD4<Float>.self, capacity: 1) {
                                $0.pointee = acc
                            }
                        }
                    } else {
                        for x in 0..<outWidth {
                            let acc = dot(row + (starts[x] - firstColumn), weights + x * taps, taps)
                            let d = dst + x * 3
                            d[0] = acc.x
                            d[1] = acc.y
                            d[2] = acc.z
                        }
                    }
                }
            }
        }
    }

    /// `sum(weights[t] * pixels[t])` over `taps` pixels.
    @inline(__always)
    private static func dot(_ pixels: UnsafeMutablePointer<SIMD4<Float>>,
                            _ weights: UnsafePointer<Float>, _ taps: Int) -> SIMD4<Float> {
        var acc0 = SIMD4<Float>.zero
        var acc1 = SIMD4<Float>.zero
        var t = 0
        while t + 1 < taps {
            acc0 += weights[t] * pixels[t]
            acc1 += weights[t + 1] * pixels[t + 1]
            t += 2
        }
        if t < taps { acc0 += weights[t] * pixels[t] }
        return acc0 + acc1
    }

    /// Converts `count` pixels of 3 or 4 bytes into floats, premultiplying colour by alpha if asked.
    @inline(__always)
    private static func widen(_ src: UnsafePointer<UInt8>, count: Int, channels: Int,
                              premultiply: Bool, into row: UnsafeMutablePointer<SIMD4<Float>>) {
        if channels == 3 {
            for i in 0..<count {
                let p = src + i * 3
                row[i] = SIMD4(Float(p[0]), Float(p[1]), Float(p[2]), 0)
            }
        } else if premultiply {
            for i in 0..<count {
                let p = src + i * 4
                let a = Float(p[3])
                let f = a * (1 / 255)
                row[i] = SIMD4(Float(p[0]) * f, Float(p[1]) * f, Float(p[2]) * f, a)
            }
        } else {
            for i in 0..<count {
                let p = src + i * 4
                row[i] = SIMD4(Float(p[0]), Float(p[1]), Float(p[2]), Float(p[3]))
            }
        }
    }

    /// Filters the intermediate vertically and writes bytes. `firstRow` is the source row held
    /// in the intermediate's row 0.
    static func verticalPass(intermediate: UnsafeBufferPointer<Float>, firstRow: Int,
                             rowLength: Int, channels: Int, table: WeightTable,
                             alpha: AlphaHandling, into output: UnsafeMutableBufferPointer<UInt8>) {
        let taps = table.taps
        let acc = UnsafeMutablePointer<Float>.allocate(capacity: rowLength)
        defer { acc.deallocate() }
        let inter = intermediate.baseAddress!
        let out = output.baseAddress!

        table.starts.withUnsafeBufferPointer { starts in
            table.weights.withUnsafeBufferPointer { weights in
                for y in 0..<table.count {
                    let w = weights.baseAddress! + y * taps
                    let src = inter + (starts[y] - firstRow) * rowLength
                    // First tap initialises, later taps accumulate; a pair of rows at a time
                    // halves the passes over the accumulator.
                    let w0 = w[0]
                    for i in 0..<rowLength { acc[i] = w0 * src[i] }
                    var t = 1
                    while t + 1 < taps {
                        let wa = w[t], wb = w[t + 1]
                        let a = src + t * rowLength, b = src + (t + 1) * rowLength
                        for i in 0..<rowLength { acc[i] += wa * a[i] + wb * b[i] }
                        t += 2
                    }
                    if t < taps {
                        let wa = w[t]
                        let a = src + t * rowLength
                        for i in 0..<rowLength { acc[i] += wa * a[i] }
                    }
                    store(acc, count: rowLength, channels: channels, alpha: alpha,
                          into: out + y * rowLength)
                }
            }
        }
    }

    /// Rounds and clamps one row of filtered values into bytes.
    @inline(__always)
    private static func store(_ acc: UnsafeMutablePointer<Float>, count: Int, channels: Int,
                              alpha: AlphaHandling, into dst: UnsafeMutablePointer<UInt8>) {
        switch alpha {
        case .none:
            for i in 0..<count { dst[i] = toByte(acc[i]) }
        case .keepPremultiplied:
            var i = 0
            while i < count {
                let a = toByte(acc[i + 3])
                dst[i] = min(toByte(acc[i]), a)
                dst[i + 1] = min(toByte(acc[i + 1]), a)
                dst[i + 2] = min(toByte(acc[i + 2]), a)
                dst[i + 3] = a
                i += 4
            }
        case .premultiplyAround:
            var i = 0
            while i < count {
                let aValue = acc[i + 3]
                let a = toByte(aValue)
                if a == 0 {
                    dst[i] = 0; dst[i + 1] = 0; dst[i + 2] = 0; dst[i + 3] = 0
                } else {
                    // Divide by the unclamped alpha: ringing moves colour and alpha together.
                    let f = 255 / aValue
                    dst[i] = toByte(acc[i] * f)
                    dst[i + 1] = toByte(acc[i + 1] * f)
                    dst[i + 2] = toByte(acc[i + 2] * f)
                    dst[i + 3] = a
                }
                i += 4
            }
        }
    }

    /// Round to nearest and clamp to 0...255 (Lanczos rings past both ends).
    @inline(__always)
    static func toByte(_ v: Float) -> UInt8 {
        UInt8(min(max(v + 0.5, 0), 255))
    }
}
