import KilnModel
@testable import KilnProcessing

/// Measurements over pixels for the processor tests.
enum PixelStats {
    /// Sum of absolute differences between horizontal and vertical neighbours, colour channels
    /// only: the image's edge energy.
    static func edgeEnergy(_ image: PixelBuffer) -> Int {
        let c = image.channels, w = image.width, h = image.height, p = image.pixels
        var total = 0
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * c
                for k in 0..<3 {
                    if x + 1 < w { total += abs(Int(p[i + k]) - Int(p[i + c + k])) }
                    if y + 1 < h { total += abs(Int(p[i + k]) - Int(p[i + w * c + k])) }
                }
            }
        }
        return total
    }

    /// Mean of the colour channels.
    static func mean(_ image: PixelBuffer) -> Double {
        colourValues(image).reduce(0, +) / Double(image.pixelCount * 3)
    }

    /// Standard deviation of the colour channels.
    static func standardDeviation(_ image: PixelBuffer) -> Double {
        let values = colourValues(image), m = values.reduce(0, +) / Double(values.count)
        return (values.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    /// Mean over pixels of max(r, g, b) − min(r, g, b): how colourful the image is.
    static func chroma(_ image: PixelBuffer) -> Double {
        var total = 0
        for i in 0..<image.pixelCount {
            let px = image.pixels[(i * image.channels)..<(i * image.channels + 3)]
            total += Int(px.max()!) - Int(px.min()!)
        }
        return Double(total) / Double(image.pixelCount)
    }

    /// The alpha channel (255 for RGB).
    static func alpha(_ image: PixelBuffer, x: Int, y: Int) -> UInt8 {
        image.hasAlpha ? image.pixel(x: x, y: y)[3] : 255
    }

    static func colourValues(_ image: PixelBuffer) -> [Double] {
        var out = [Double]()
        out.reserveCapacity(image.pixelCount * 3)
        for i in 0..<image.pixelCount {
            for k in 0..<3 { out.append(Double(image.pixels[i * image.channels + k])) }
        }
        return out
    }

    /// A colourful, detailed test image: smooth gradients plus a checker of 4 px squares.
    static func photoLike(width: Int, height: Int) -> PixelBuffer {
        TestImages.rgb(width: width, height: height) { x, y in
            let check = ((x / 4 + y / 4) % 2 == 0) ? 40.0 : -40.0
            return (60 + Double(x) * 120 / Double(width) + check,
                    200 - Double(y) * 120 / Double(height) + check,
                    100 + check)
        }
    }

    /// `width × height` RGB, flat grey on the `flat` side and noise on the other half.
    static func halfTextured(width: Int, height: Int, texturedRight: Bool = true, horizontal: Bool = true) -> PixelBuffer {
        let noise = TestImages.noise(width: width, height: height, channels: 3, seed: 7)
        var out = noise
        for y in 0..<height {
            for x in 0..<width {
                let firstHalf = horizontal ? x < width / 2 : y < height / 2
                if firstHalf == texturedRight {
                    let i = (y * width + x) * 3
                    out.pixels[i] = 128; out.pixels[i + 1] = 128; out.pixels[i + 2] = 128
                }
            }
        }
        return out
    }

    static func context(_ image: PixelBuffer, maxOutputPixels: Int = 50_000_000) -> ProcessingContext {
        ProcessingContext(logicalSize: image.size, maxOutputPixels: maxOutputPixels)
    }
}
