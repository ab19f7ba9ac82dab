import KilnModel

/// A `width × height` rectangle whose corners are quarter circles of `radius` (at most half the
/// short side). With the radius at half the side of a square it is a disc: `Circle` uses it too.
struct RoundedRectMask: ShapeMask {
    let width: Int
    let height: Int
    let radius: Float

    init(width: Int, height: Int, radius: Double) {
        self.width = width
        self.height = height
        self.radius = Float(min(max(radius, 0), Double(min(width, height)) / 2))
    }

    /// Distance of row `y`'s pixel centres into the top or bottom corner band, with the band's arc
    /// centre; nil for rows between the corners.
    @inline(__always)
    func corner(row y: Int) -> (dy: Float, centreY: Float)? {
        let py = Float(y) + 0.5, r = radius, h = Float(height)
        if py < r { return (r - py, r) }
        if py > h - r { return (py - (h - r), h - r) }
        return nil
    }

    func spans(row y: Int) -> (outer: Range<Int>, inner: Range<Int>) {
        guard radius > 0, let (dy, _) = corner(row: y) else { return (0..<width, 0..<width) }
        let r = radius, w = Float(width)
        let ho = Self.halfChord(radius: r + 0.5, dy: dy), hi = Self.halfChord(radius: r - 0.5, dy: dy)
        let outerStart = max(0, Int((r - ho - 0.5).rounded(.down)))
        let outerEnd = min(width, Int((w - r + ho - 0.5).rounded(.up)) + 1)
        let innerStart = max(outerStart, Int((r - hi - 0.5).rounded(.up)))
        let innerEnd = min(outerEnd, Int((w - r + hi - 0.5).rounded(.down)) + 1)
        let outer = outerStart < outerEnd ? outerStart..<outerEnd : 0..<0
        let inner = innerStart < innerEnd ? innerStart..<innerEnd : 0..<0
        return (outer, inner)
    }

    func coverage(x: Int, y: Int) -> Float {
        guard let (_, cy) = corner(row: y) else { return 1 }
        let px = Float(x) + 0.5, py = Float(y) + 0.5, r = radius
        if px < r { return Self.arcCoverage(px: px, py: py, cx: r, cy: cy, radius: r) }
        if px > Float(width) - r { return Self.arcCoverage(px: px, py: py, cx: Float(width) - r, cy: cy, radius: r) }
        return 1
    }
}

/// `rounded:<radius>` (`rc`): rounds the corners with quarter circles of `radius` output pixels
/// (clamped to half the short side), antialiased; outside them the result is transparent (RGBA;
/// a JPEG output is flattened on the background).
public struct RoundedCorners: ImageProcessing, Sendable, Hashable {
    public var radius: Int

    public init(radius: Int) {
        self.radius = radius
    }

    public var identifier: String { Operation.rounded(radius: radius).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard radius >= 1 else {
            throw .invalidArgument(option: "rounded", reason: "radius must be at least 1")
        }
        guard image.pixelCount > 0 else { return image }
        return RoundedRectMask(width: image.width, height: image.height, radius: Double(radius))
            .apply(to: image, background: nil)
    }
}

/// `circle[:<hex>]`: crops the centred square (side = the short side) and keeps the inscribed
/// disc, antialiased. Outside the disc the result is transparent (RGBA), or, with a background,
/// that colour (RGB: the disc composited over it).
public struct Circle: ImageProcessing, Sendable, Hashable {
    public var background: RGBColor?

    public init(background: RGBColor? = nil) {
        self.background = background
    }

    public var identifier: String { Operation.circle(background: background).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard image.pixelCount > 0 else { return image }
        let side = min(image.width, image.height)
        let square = Crop.cut(image, x: (image.width - side) / 2, y: (image.height - side) / 2,
                              width: side, height: side)
        return RoundedRectMask(width: side, height: side, radius: Double(side) / 2)
            .apply(to: square, background: background)
    }
}
