import KilnModel

/// Small synthetic images for the processing tests.
enum TestImages {
    /// Every pixel the same colour (3 or 4 values).
    static func constant(width: Int, height: Int, _ colour: [UInt8]) -> PixelBuffer {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * colour.count)
        for _ in 0..<(width * height) { pixels.append(contentsOf: colour) }
        return PixelBuffer(width: width, height: height, channels: colour.count, pixels: pixels)
    }

    /// An RGB image whose channels are `f(x, y)`, rounded and clamped.
    static func rgb(width: Int, height: Int,
                    _ f: (Int, Int) -> (Double, Double, Double)) -> PixelBuffer {
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = f(x, y)
                pixels.append(byte(r))
                pixels.append(byte(g))
                pixels.append(byte(b))
            }
        }
        return PixelBuffer(width: width, height: height, channels: 3, pixels: pixels)
    }

    /// Deterministic noise (a linear congruential generator), for benchmarks.
    static func noise(width: Int, height: Int, channels: Int, seed: UInt64 = 1) -> PixelBuffer {
        var state = seed
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for i in pixels.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            pixels[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    /// A white opaque disc on transparent black (straight alpha, hard edge).
    static func disc(size: Int, radius: Double) -> PixelBuffer {
        var pixels = [UInt8](repeating: 0, count: size * size * 4)
        let centre = Double(size) / 2
        for y in 0..<size {
            for x in 0..<size {
                let dx = Double(x) + 0.5 - centre, dy = Double(y) + 0.5 - centre
                if dx * dx + dy * dy <= radius * radius {
                    let i = (y * size + x) * 4
                    pixels[i] = 255; pixels[i + 1] = 255; pixels[i + 2] = 255; pixels[i + 3] = 255
                }
            }
        }
        return PixelBuffer(width: size, height: size, channels: 4, pixels: pixels)
    }

    /// The rows of an image as arrays of pixels (each pixel an array of channel values).
    static func grid(_ image: PixelBuffer) -> [[[UInt8]]] {
        (0..<image.height).map { y in (0..<image.width).map { x in image.pixel(x: x, y: y) } }
    }

    static func byte(_ v: Double) -> UInt8 {
        UInt8(min(max(v.rounded(), 0), 255))
    }
}
