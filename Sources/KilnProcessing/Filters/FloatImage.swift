import KilnModel

/// An image as `Float` samples, interleaved like `PixelBuffer` (RGB or RGBA, 0...255), for the
/// filters that need more precision than bytes (blur, sharpen).
///
/// RGBA is held premultiplied (`c * a / 255`), so that a filter mixing neighbours weights each
/// one's colour by its opacity: transparent black next to an opaque edge does not darken it.
struct FloatImage {
    var width: Int
    var height: Int
    var channels: Int
    var samples: [Float]

    var rowLength: Int { width * channels }

    init(width: Int, height: Int, channels: Int, samples: [Float]) {
        self.width = width
        self.height = height
        self.channels = channels
        self.samples = samples
    }

    /// Samples of `image`, premultiplied when it has alpha (kept as is if it already is).
    init(_ image: PixelBuffer) {
        width = image.width
        height = image.height
        channels = image.channels
        let count = image.pixels.count
        let premultiply = image.hasAlpha && !image.isPremultiplied
        samples = [Float](unsafeUninitializedCapacity: count) { dst, initialised in
            image.pixels.withUnsafeBufferPointer { src in
                if premultiply {
                    var i = 0
                    while i < count {
                        let a = Float(src[i + 3])
                        let k = a * (1 / 255)
                        dst[i] = Float(src[i]) * k
                        dst[i + 1] = Float(src[i + 1]) * k
                        dst[i + 2] = Float(src[i + 2]) * k
                        dst[i + 3] = a
                        i += 4
                    }
                } else {
                    for i in 0..<count { dst[i] = Float(src[i]) }
                }
            }
            initialised = count
        }
    }

    /// Bytes again, rounded and clamped; RGBA comes back with straight (unpremultiplied) alpha,
    /// as the encoders expect. Fully transparent pixels become transparent black.
    func pixelBuffer() -> PixelBuffer {
        let count = samples.count
        let alpha = channels == 4
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { dst, initialised in
            samples.withUnsafeBufferPointer { src in
                if alpha {
                    var i = 0
                    while i < count {
                        let a = Self.clamp(src[i + 3])
                        if a < 0.5 {
                            dst[i] = 0; dst[i + 1] = 0; dst[i + 2] = 0; dst[i + 3] = 0
                        } else {
                            let k = 255 / a
                            dst[i] = Self.byte(src[i] * k)
                            dst[i + 1] = Self.byte(src[i + 1] * k)
                            dst[i + 2] = Self.byte(src[i + 2] * k)
                            dst[i + 3] = Self.byte(a)
                        }
                        i += 4
                    }
                } else {
                    for i in 0..<count { dst[i] = Self.byte(src[i]) }
                }
            }
            initialised = count
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: bytes)
    }

    @inline(__always)
    static func clamp(_ v: Float) -> Float {
        Swift.min(Swift.max(v, 0), 255)
    }

    /// `round(v)` clamped to 0...255.
    @inline(__always)
    static func byte(_ v: Float) -> UInt8 {
        UInt8(Swift.min(Swift.max(v + 0.5, 0), 255))
    }
}
