import KilnModel

/// An affine colour transform: `out = M · (r, g, b) + offset`, clamped to 0...255, alpha untouched.
///
/// Applied through nine lookup tables (`M[i][j] × v` for every byte `v`, in 16.16 fixed point), so
/// a pixel costs nine table reads and three additions whatever the matrix. Premultiplied input is
/// unpremultiplied first (an offset is meaningless on premultiplied colour); the result has
/// straight alpha.
public struct ColorMatrix: Sendable, Hashable {
    /// Row-major 3×3: `rows[i][j]` is the weight of input channel `j` in output channel `i`.
    public var rows: [[Float]]
    /// Added to each output channel, in 0...255 units.
    public var offset: [Float]

    public init(rows: [[Float]], offset: [Float] = [0, 0, 0]) {
        precondition(rows.count == 3 && rows.allSatisfy { $0.count == 3 } && offset.count == 3)
        self.rows = rows
        self.offset = offset
    }

    public static let identity = ColorMatrix(rows: [[1, 0, 0], [0, 1, 0], [0, 0, 1]])

    /// Rec. 709 luma weights, the grey of `grayscale`, `tint` and `saturation`.
    public static let luma: [Float] = [0.2126, 0.7152, 0.0722]

    /// `self` applied after `other` (the product `self · other`).
    public func concatenating(_ other: ColorMatrix) -> ColorMatrix {
        var r = [[Float]](repeating: [0, 0, 0], count: 3)
        var o: [Float] = [0, 0, 0]
        for i in 0..<3 {
            for j in 0..<3 {
                r[i][j] = (0..<3).reduce(0) { $0 + rows[i][$1] * other.rows[$1][j] }
            }
            o[i] = offset[i] + (0..<3).reduce(0) { $0 + rows[i][$1] * other.offset[$1] }
        }
        return ColorMatrix(rows: r, offset: o)
    }

    /// The transformed image; same size and channel count.
    public func apply(to input: PixelBuffer) -> PixelBuffer {
        guard self != .identity else { return input }
        var image = Alpha.unpremultiplied(input)
        image.isPremultiplied = false
        // tables[(i * 3 + j) * 256 + v] = (M[i][j] * v (+ offset[i] + 0.5 when j == 0)) * 65536
        var tables = [Int32](repeating: 0, count: 9 * 256)
        for i in 0..<3 {
            for j in 0..<3 {
                let bias = j == 0 ? offset[i] + 0.5 : 0
                for v in 0..<256 {
                    let value = (rows[i][j] * Float(v) + bias) * 65536
                    tables[(i * 3 + j) * 256 + v] = Int32(Swift.min(Swift.max(value, -7e8), 7e8))
                }
            }
        }
        let step = image.channels
        let count = image.pixels.count
        // Written into a new array: the input's storage is shared with the caller, so changing it
        // in place would copy it first anyway.
        let out = [UInt8](unsafeUninitializedCapacity: count) { dst, initialised in
            tables.withUnsafeBufferPointer { t in
                image.pixels.withUnsafeBufferPointer { p in
                    Self.run(t.baseAddress!, p.baseAddress!, dst.baseAddress!, count: count, channels: step)
                }
            }
            initialised = count
        }
        image.pixels = out
        return image
    }

    /// The per-pixel loop, over raw pointers (no captured state in the hot loop).
    private static func run(_ t: UnsafePointer<Int32>, _ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>,
                            count: Int, channels: Int) {
        var k = 0
        while k < count {
            let r = Int(src[k]), g = Int(src[k + 1]) + 256, b = Int(src[k + 2]) + 512
            dst[k] = byte(t[r] &+ t[g] &+ t[b])
            dst[k + 1] = byte(t[768 + r] &+ t[768 + g] &+ t[768 + b])
            dst[k + 2] = byte(t[1536 + r] &+ t[1536 + g] &+ t[1536 + b])
            if channels == 4 { dst[k + 3] = src[k + 3] }
            k += channels
        }
    }

    /// `floor(v / 65536)` clamped to 0...255 (the tables carry the +0.5 that makes it a rounding).
    @inline(__always)
    static func byte(_ v: Int32) -> UInt8 {
        UInt8(truncatingIfNeeded: Swift.min(Swift.max(v >> 16, 0), 255))
    }
}
