import Glibc
import KilnModel

/// `blur:<sigma>` (`bl`): a Gaussian blur of standard deviation `sigma` pixels.
///
/// Separable, with clamp-to-edge borders. Below `boxThreshold` the rows and columns are convolved
/// with the sampled Gaussian itself (radius `ceil(3 sigma)`, weights normalised to sum 1); from
/// there on three successive box filters whose widths are chosen so their variances add up to
/// `sigma²` (Kovesi, "Fast almost-Gaussian filtering", 2010). Three boxes are within a few
/// percent of the Gaussian and cost O(1) per pixel whatever the sigma, so `bl:50` costs about
/// what `bl:2` costs. RGBA is filtered premultiplied (transparent neighbours do not darken
/// edges) and returned with straight alpha.
public struct GaussianBlur: ImageProcessing, Sendable, Hashable {
    public var sigma: Double

    /// Sigmas below this use the exact kernel (at most 13 taps), above it three boxes.
    static let boxThreshold = 2.0

    public init(sigma: Double) {
        self.sigma = sigma
    }

    public var identifier: String { Operation.blur(sigma: sigma).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard sigma.isFinite, sigma > 0 else {
            throw .invalidArgument(option: "blur", reason: "sigma must be above 0")
        }
        // Below the minimum no pixel changes (the URL parser drops such steps); returning the
        // image keeps a tiny sigma from reaching the kernel, where its square could underflow.
        guard image.pixelCount > 0, sigma >= SpecParser.minimumSigma else { return image }
        // In vertical strips (`FloatStrips`): the float copy and its scratch stay a few MB.
        return FloatStrips.map(image, halo: Self.halo(sigma: sigma)) { strip, _ in Self.blur(&strip, sigma: sigma) }
    }

    /// How far the passes spread a value sideways: the kernel's radius, or the boxes' radii summed.
    public static func halo(sigma: Double) -> Int {
        sigma < boxThreshold ? max(1, Int((3 * sigma).rounded(.up))) : boxRadii(sigma: sigma).reduce(0, +)
    }

    /// Bytes of one strip's floats for an image of `size` and `channels` (the memory budget).
    public static func stripBytes(_ size: PixelSize, channels: Int, sigma: Double) -> Int {
        FloatStrips.stripBytes(width: size.width, height: size.height, channels: channels, halo: halo(sigma: sigma))
    }

    /// Blurs `image` in place.
    static func blur(_ image: inout FloatImage, sigma: Double) {
        let w = image.width, h = image.height, c = image.channels
        var scratch = [Float](repeating: 0, count: image.samples.count)
        image.samples.withUnsafeMutableBufferPointer { mainBuffer in
            scratch.withUnsafeMutableBufferPointer { scratchBuffer in
                let a = mainBuffer.baseAddress!, b = scratchBuffer.baseAddress!
                if sigma < boxThreshold {
                    let weights = kernel(sigma: sigma)
                    BlurPasses.horizontalKernel(a, b, width: w, height: h, channels: c, weights: weights)
                    BlurPasses.verticalKernel(b, a, width: w, height: h, channels: c, weights: weights)
                } else {
                    for radius in boxRadii(sigma: sigma) {
                        BlurPasses.horizontalBox(a, b, width: w, height: h, channels: c, radius: radius)
                        BlurPasses.verticalBox(b, a, width: w, height: h, channels: c, radius: radius)
                    }
                }
            }
        }
    }

    /// The sampled Gaussian `exp(-x² / 2σ²)` for x in `-r...r`, `r = ceil(3σ)`, summing to 1.
    static func kernel(sigma: Double) -> [Float] {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        let weights = (-radius...radius).map { x in exp(-Double(x * x) / (2 * sigma * sigma)) }
        let total = weights.reduce(0, +)
        return weights.map { Float($0 / total) }
    }

    /// The radii of the three boxes approximating a Gaussian of `sigma`: widths `wl` (the odd
    /// floor of the ideal width `sqrt(12σ²/3 + 1)`) and `wl + 2`, as many of each as brings the
    /// summed variance `Σ (w² - 1) / 12` closest to `σ²`.
    static func boxRadii(sigma: Double, passes: Int = 3) -> [Int] {
        let n = Double(passes)
        let ideal = (12 * sigma * sigma / n + 1).squareRoot()
        var lower = Int(ideal.rounded(.down))
        if lower % 2 == 0 { lower -= 1 }
        lower = max(1, lower)
        let wl = Double(lower)
        let m = Int(((12 * sigma * sigma - n * wl * wl - 4 * n * wl - 3 * n) / (-4 * wl - 4)).rounded())
        return (0..<passes).map { i in (i < m ? lower : lower + 2) / 2 }
    }
}
