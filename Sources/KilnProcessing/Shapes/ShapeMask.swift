import KilnModel

/// A shape over a `width × height` image, with antialiased edges: the fraction of each pixel
/// that lies inside it (its coverage).
///
/// Coverage is analytic: for an edge that is a circular arc of radius `r` around `c`, a pixel
/// whose centre is at distance `d` from `c` is covered `clamp(r − d + 0.5, 0, 1)`, the exact area
/// for a straight edge and within a few percent for arcs over a pixel or more. Each row reports
/// the span that is fully inside and the span that is touched at all, so only the one or two
/// pixels of edge per side are computed.
protocol ShapeMask {
    /// Columns `inner` are fully covered, columns outside `outer` not at all (`inner ⊆ outer`).
    func spans(row y: Int) -> (outer: Range<Int>, inner: Range<Int>)
    /// The coverage (0...1) of pixel `(x, y)`, for columns between the two spans.
    func coverage(x: Int, y: Int) -> Float
}

extension ShapeMask {
    /// Applies the mask to `input` (same size). Without a background the result is RGBA whose
    /// alpha is `alpha × coverage` (transparent black outside). With one it is RGB: the pixel,
    /// its alpha times coverage, composited over the opaque background.
    func apply(to input: PixelBuffer, background: RGBColor?) -> PixelBuffer {
        let image = Alpha.unpremultiplied(input)
        let w = image.width, h = image.height, ci = image.channels
        let co = background == nil ? 4 : 3
        let bg: [Float] = (background ?? .black).bytes.map { Float($0) }
        let out = [UInt8](unsafeUninitializedCapacity: w * h * co) { dst, initialised in
            image.pixels.withUnsafeBufferPointer { src in
                for y in 0..<h {
                    let (outer, inner) = spans(row: y)
                    let s = src.baseAddress! + y * w * ci, d = dst.baseAddress! + y * w * co
                    for x in 0..<w {
                        let k: Float = inner.contains(x) ? 1 : outer.contains(x) ? coverage(x: x, y: y) : 0
                        let sp = s + x * ci, dp = d + x * co
                        let a = ci == 4 ? Float(sp[3]) * k : 255 * k
                        if co == 4 {
                            if a == 0 {
                                dp[0] = 0; dp[1] = 0; dp[2] = 0; dp[3] = 0
                            } else {
                                dp[0] = sp[0]; dp[1] = sp[1]; dp[2] = sp[2]
                                dp[3] = UInt8(a + 0.5)
                            }
                        } else {
                            let t: Float = a * (1 / 255)
                            for j in 0..<3 {
                                let fg: Float = Float(sp[j]) * t
                                let v: Float = fg + bg[j] * (1 - t)
                                dp[j] = UInt8(v + 0.5)
                            }
                        }
                    }
                }
            }
            initialised = w * h * co
        }
        return PixelBuffer(width: w, height: h, channels: co, pixels: out)
    }

    /// `clamp(radius − |(px, py) − (cx, cy)| + 0.5, 0, 1)` for the pixel centre `(px, py)`.
    @inline(__always)
    static func arcCoverage(px: Float, py: Float, cx: Float, cy: Float, radius: Float) -> Float {
        let dx = px - cx, dy = py - cy
        return Swift.min(Swift.max(radius - (dx * dx + dy * dy).squareRoot() + 0.5, 0), 1)
    }

    /// The half-width, at vertical distance `dy` from an arc's centre, of the disc of `radius`
    /// (0 when the row misses it).
    @inline(__always)
    static func halfChord(radius: Float, dy: Float) -> Float {
        let q = radius * radius - dy * dy
        return q > 0 ? q.squareRoot() : 0
    }
}
