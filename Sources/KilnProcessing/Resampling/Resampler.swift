import KilnCore

/// A separable Lanczos-3 resampler over `PixelBuffer`.
///
/// Resamples a floating-point source rectangle into an output size: the kernel is widened by the
/// scale factor when downscaling (so it antialiases), source pixels outside the image are clamped
/// to the edge, and weights are normalised so a flat colour stays exactly flat. The horizontal
/// pass runs first into a `Float` intermediate holding only the source rows the vertical pass
/// reads; the vertical pass then rounds and clamps to bytes.
///
/// RGBA that is not premultiplied is premultiplied (in floating point) before filtering and
/// unpremultiplied after, so transparent pixels do not bleed their colour into the edges of
/// opaque ones. Premultiplied RGBA stays premultiplied, with colour clamped to alpha.
public struct Resampler: Sendable {
    public init() {}

    /// Resamples the plan's source rectangle, given in `image`'s own pixel coordinates, into an
    /// image of `plan.output` pixels. Returns `image` itself when the plan is the identity.
    public func resample(_ image: PixelBuffer, plan: ResizePlan) -> PixelBuffer {
        precondition(plan.output.width > 0 && plan.output.height > 0, "empty output")
        precondition(image.width > 0 && image.height > 0, "empty image")
        precondition(plan.sourceWidth > 0 && plan.sourceHeight > 0, "empty source rectangle")
        if plan.isIdentity(for: image.size) { return image }

        let horizontal = WeightTable(sourceLength: image.width, origin: plan.sourceX,
                                     extent: plan.sourceWidth, outputLength: plan.output.width)
        let vertical = WeightTable(sourceLength: image.height, origin: plan.sourceY,
                                   extent: plan.sourceHeight, outputLength: plan.output.height)
        return resample(image, horizontal: horizontal, vertical: vertical)
    }

    /// How colour relates to alpha on the way in and out of the filter.
    enum AlphaHandling {
        /// No alpha channel, or colour already premultiplied: filter the bytes as they are.
        case none
        /// Premultiplied RGBA: filter as is, then keep colour at or below alpha.
        case keepPremultiplied
        /// Straight RGBA: premultiply while reading, unpremultiply while writing.
        case premultiplyAround
    }

    static func alphaHandling(for image: PixelBuffer) -> AlphaHandling {
        guard image.hasAlpha else { return .none }
        return image.isPremultiplied ? .keepPremultiplied : .premultiplyAround
    }

    func resample(_ image: PixelBuffer, horizontal: WeightTable, vertical: WeightTable) -> PixelBuffer {
        let channels = image.channels
        let outWidth = horizontal.count
        let outHeight = vertical.count
        let alpha = Self.alphaHandling(for: image)
        let rows = vertical.sourceRange
        let interRowLength = outWidth * channels

        var intermediate = [Float](repeating: 0, count: rows.count * interRowLength)
        image.pixels.withUnsafeBufferPointer { source in
            intermediate.withUnsafeMutableBufferPointer { inter in
                Self.horizontalPass(source: source, width: image.width, channels: channels,
                                    rows: rows, table: horizontal,
                                    premultiply: alpha == .premultiplyAround, into: inter)
            }
        }

        var output = [UInt8](repeating: 0, count: outWidth * outHeight * channels)
        intermediate.withUnsafeBufferPointer { inter in
            output.withUnsafeMutableBufferPointer { out in
                Self.verticalPass(intermediate: inter, firstRow: rows.lowerBound,
                                  rowLength: interRowLength, channels: channels,
                                  table: vertical, alpha: alpha, into: out)
            }
        }
        return PixelBuffer(width: outWidth, height: outHeight, channels: channels,
                           isPremultiplied: image.isPremultiplied && image.hasAlpha, pixels: output)
    }
}
