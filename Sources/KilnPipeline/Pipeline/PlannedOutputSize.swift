import KilnModel

/// The size of a request's result, planned from the source's header before anything is decoded,
/// so that limits of the output format (WebP's 16383 px) are refused before the work is done.
///
/// Each operation's size follows the processor's own rule: `ResizePlan` for resizes (the very
/// plan `Resize` executes), the window of `crop` (and of `cut`, from the size at its step), the sum of `pad`, the short side of `circle`,
/// the transposed size of `rotate:90/270`, and the unchanged size for filters, `rounded` and
/// `flip`. A step whose size is not known in advance (a custom processor) or that would fail
/// anyway (a crop corner outside the image) makes the plan nil: the check right before encoding
/// (`ImagePipeline.checkFormatLimit`) still catches the result.
extension ImageRequest {
    /// The planned size of the result for a source displayed at `source`, nil when unknown.
    public func plannedOutputSize(source: PixelSize) -> PixelSize? {
        var size = source
        for operation in operations {
            guard size.width > 0, size.height > 0,
                  let next = ImageRequest.plannedSize(of: operation, input: size) else { return nil }
            size = next
        }
        return size
    }

    static func plannedSize(of operation: Operation, input: PixelSize) -> PixelSize? {
        switch operation {
        case .resize(let options):
            return ResizePlan(options: options, source: input).output
        case .crop(let c):
            if let edges = c.edges {
                // Nothing left: the processor refuses it (a 400); no plan.
                return edges.window(in: input).map { PixelSize(width: $0.width, height: $0.height) }
            }
            if let x = c.x, let y = c.y {
                guard x >= 0, y >= 0, x < input.width, y < input.height else { return nil }
                return PixelSize(width: min(c.width, input.width - x), height: min(c.height, input.height - y))
            }
            return PixelSize(width: min(c.width, input.width), height: min(c.height, input.height))
        case .pad(let p):
            let (w, o1) = input.width.addingReportingOverflow(p.left &+ p.right)
            let (h, o2) = input.height.addingReportingOverflow(p.top &+ p.bottom)
            return o1 || o2 ? nil : PixelSize(width: w, height: h)
        case .extend(let e):
            return PixelSize(width: max(input.width, e.width), height: max(input.height, e.height))
        case .circle:
            let side = min(input.width, input.height)
            return PixelSize(width: side, height: side)
        case .rotate(let degrees):
            return degrees % 180 == 0 ? input : input.transposed
        case .rounded, .blur, .sharpen, .grayscale, .sepia, .tint, .brightness, .contrast, .saturation, .flip, .watermark:
            return input
        case .custom, .trim:
            return nil   // trim: the box is found in the pixels (at most the input)
        }
    }
}

extension ImagePipeline {
    /// Throws `PipelineError.formatLimit` when `format` cannot store an image of `size`.
    static func checkFormatLimit(_ format: ImageFormat, size: PixelSize) throws(PipelineError) {
        guard format.canHold(size) else { throw .formatLimit(format, size) }
    }

    /// The format an explicit `f:` (or, without one, the source's format) will encode, nil for
    /// `f:auto`, which picks a format that holds the result once it is known.
    static func fixedOutputFormat(_ request: ImageRequest, source: ImageFormat) -> ImageFormat? {
        switch request.output.format {
        case .format(let f): f
        case .source: source
        case .auto: nil
        }
    }
}
