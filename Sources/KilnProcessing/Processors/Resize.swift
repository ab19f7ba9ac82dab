import KilnModel

/// The resize processor (`rs:<w>:<h>:<mode>`): plans on the logical size, resamples the input.
///
/// The plan is computed for `context.logicalSize` (the size of the image as the request sees
/// it) and its source rectangle is then scaled into the input's actual pixels, so an input that
/// a decoder shrank on load (JPEG DCT scaling) yields the same output size as a full decode.
/// For `fill` with gravity `smart`, `SmartCrop` searches the input for the most detailed window of
/// the plan's source size and the plan is redone with that window's anchor.
public struct Resize: ImageProcessing, Sendable, Hashable {
    public var options: ResizeOptions

    public init(_ options: ResizeOptions) {
        self.options = options
    }

    public init(width: Int, height: Int, mode: ResizeMode = .fit, enlarge: Bool = false) {
        self.init(ResizeOptions(width: width, height: height, mode: mode, enlarge: enlarge))
    }

    /// The canonical URL segment of the operation, e.g. `rs:300:200:fill`.
    public var identifier: String { Operation.resize(options).identifier }

    /// The plan for `input` in the input's own pixel coordinates.
    /// `anchor` overrides the gravity's (fractions of the free space; `smart` passes the one it found).
    public func plan(for input: PixelSize, logicalSize: PixelSize,
                     anchor: (x: Double, y: Double)? = nil) -> ResizePlan {
        var plan = ResizePlan(options: options, source: logicalSize, anchor: anchor)
        if input != logicalSize {
            let fx = Double(input.width) / Double(logicalSize.width)
            let fy = Double(input.height) / Double(logicalSize.height)
            plan.sourceX *= fx
            plan.sourceWidth *= fx
            plan.sourceY *= fy
            plan.sourceHeight *= fy
        }
        return plan
    }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        let logical = context.logicalSize
        guard image.width > 0, image.height > 0, logical.width > 0, logical.height > 0 else {
            throw .invalidArgument(option: "rs", reason: "the image is empty")
        }
        guard options.width >= 0, options.height >= 0 else {
            throw .invalidArgument(option: "rs", reason: "width and height must not be negative")
        }
        let plan = plan(for: image.size, logicalSize: logical, anchor: smartAnchor(image, logicalSize: logical))
        // Width times height may overflow for absurd requests; compare without multiplying first.
        let (pixels, overflow) = plan.output.width.multipliedReportingOverflow(by: plan.output.height)
        if overflow || pixels > context.maxOutputPixels {
            throw .overLimit("resize to \(plan.output) is over the limit of \(context.maxOutputPixels) output pixels")
        }
        return Resampler().resample(image, plan: plan)
    }

    /// For `fill` with gravity `smart`: the anchor of the most detailed window the fill keeps.
    /// Nil otherwise, or when the fill crops nothing.
    func smartAnchor(_ image: PixelBuffer, logicalSize: PixelSize) -> (x: Double, y: Double)? {
        guard options.resolved(for: logicalSize).mode == .fill, options.gravity == .smart else { return nil }
        let window = plan(for: image.size, logicalSize: logicalSize)
        guard window.sourceWidth < Double(image.width) - 0.5 || window.sourceHeight < Double(image.height) - 0.5 else {
            return nil
        }
        return SmartCrop.anchor(in: image, width: window.sourceWidth, height: window.sourceHeight)
    }
}
