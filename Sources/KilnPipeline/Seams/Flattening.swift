import KilnModel

/// The flatten stage: composites RGBA onto an opaque colour, for output formats without alpha.
/// Default: `Flattener` (`KilnProcessing.Flatten`).
public protocol Flattening {
    func flatten(_ image: PixelBuffer, onto background: RGBColor) -> PixelBuffer
}
