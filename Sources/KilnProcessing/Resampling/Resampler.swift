import KilnModel

/// A separable Lanczos-3 resampler over `PixelBuffer`.
///
/// Resamples a floating-point source rectangle into an output size: the kernel is widened by the
/// scale factor when downscaling (so it antialiases), source pixels outside the image are clamped
/// to the edge, and weights are normalised so a flat colour stays exactly flat. The horizontal
/// pass (`HorizontalFilter`) runs first into a `Float` intermediate, a ring of the rows the
/// current vertical window reads; the vertical pass (`VerticalFilter`) then rounds and clamps
/// to bytes.
///
/// RGBA that is not premultiplied is premultiplied (in floating point) before filtering and
/// unpremultiplied after, so transparent pixels do not bleed their colour into the edges of
/// opaque ones. Premultiplied RGBA stays premultiplied, with colour clamped to alpha.
///
/// The passes run in CKilnResample's fixed-point kernel (`FixedPointResampler`; AVX2 where the
/// CPU has it, the same bytes elsewhere) unless `kernel` is `.float`: the Swift float passes, the
/// reference the kernel is tested against, and the fallback should the kernel decline.
public struct Resampler: Sendable {
    public var kernel: ResamplerKernel

    /// `kernel` defaults to the process's choice (`ResamplerKernel.processDefault`, the
    /// setting `debug.resampler`: `.automatic`, the fixed-point kernel, unless a debug setting
    /// asks for another).
    public init(kernel: ResamplerKernel = .processDefault) {
        self.kernel = kernel
    }

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
    package enum AlphaHandling {
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
        if let path = kernel.resolved,
           let bytes = FixedPointResampler(kernel: path).resample(
               pixels: image.pixels, width: image.width, height: image.height, channels: image.channels,
               alpha: Self.alphaHandling(for: image), horizontal: horizontal, vertical: vertical) {
            return PixelBuffer(width: horizontal.count, height: vertical.count, channels: image.channels,
                               isPremultiplied: image.isPremultiplied && image.hasAlpha, pixels: bytes)
        }
        return resampleFloat(image, horizontal: horizontal, vertical: vertical)
    }

    /// The float reference: `HorizontalFilter` into a ring of rows, `VerticalFilter` out.
    func resampleFloat(_ image: PixelBuffer, horizontal: WeightTable, vertical: WeightTable) -> PixelBuffer {
        let channels = image.channels
        let outWidth = horizontal.count
        let outHeight = vertical.count
        let alpha = Self.alphaHandling(for: image)
        let rowLength = outWidth * channels
        let taps = vertical.taps

        let horizontalFilter = HorizontalFilter(table: horizontal, channels: channels,
                                                premultiply: alpha == .premultiplyAround)
        let verticalFilter = VerticalFilter(rowLength: rowLength, alpha: alpha)
        // The intermediate is a ring of `taps` horizontally filtered rows: vertical windows only
        // move down, so row r lives in slot r % taps until no later window needs it. Memory
        // stays at taps × output width (no full-height intermediate, even for large upscales),
        // and the window the vertical pass reads stays in cache.
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: max(taps * rowLength, 1))
        defer { ring.deallocate() }
        let window = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: taps)
        defer { window.deallocate() }

        let output = [UInt8](unsafeUninitializedCapacity: outHeight * rowLength) { out, count in
            image.pixels.withUnsafeBufferPointer { sourceBuffer in
                vertical.starts.withUnsafeBufferPointer { starts in
                    vertical.weights.withUnsafeBufferPointer { weights in
                        let source = sourceBuffer.baseAddress!
                        let sourceRowBytes = image.rowBytes
                        var next = 0                        // next source row to filter
                        for y in 0..<outHeight {
                            let start = starts[y]
                            next = max(next, start)
                            while next < start + taps {
                                horizontalFilter.filter(source + next * sourceRowBytes,
                                                        into: ring + (next % taps) * rowLength)
                                next += 1
                            }
                            for t in 0..<taps {
                                window[t] = UnsafePointer(ring + ((start + t) % taps) * rowLength)
                            }
                            verticalFilter.filter(window, weights: weights.baseAddress! + y * taps,
                                                  taps: taps, into: out.baseAddress! + y * rowLength)
                        }
                    }
                }
            }
            count = out.count
        }
        return PixelBuffer(width: outWidth, height: outHeight, channels: channels,
                           isPremultiplied: image.isPremultiplied && image.hasAlpha, pixels: output)
    }
}
