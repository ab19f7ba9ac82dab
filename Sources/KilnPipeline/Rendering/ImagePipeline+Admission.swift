import KilnModel
import KilnProcessing

/// The admit step of `render` (`RenderStep.admit`): what cannot be made is refused before a pixel
/// is decoded.
///
/// - Every kind: the header (an animation's canvas) against the decode limits, whatever the mode.
/// - Images with a fixed output format: the planned size against the format's limit (WebP beyond
///   16383 px); `f:auto` adapts later.
/// - Stills: the request budgets (`CostBudget.swift`); over them for every variant (the smallest
///   decode alone) is the source's failure.
/// - Documents with placeholders: the small decode's budget.
/// - Animations, from the structure: the frame count (`limits.max_animation_frames`), canvas ×
///   frames and the frames' stored area (`limits.max_animation_pixels`) and the work of all frames
///   (`limits.max_request_work`): over one of these, `limits.animation_over_limit` refuses (413
///   naming it) or renders the first frame alone. Animated output keeps each frame's duration and
///   the loop count; a still output (`f:jpeg`, `f:png`, any `frame:<n>`) decodes up to frame n
///   (compositing needs the frames before it) and renders that one frame like a still source.
extension ImagePipeline {
    /// The output format for an animated (or GIF) source. As `OutputOptions.resolvedFormat`, except:
    /// GIF is written only when asked for (`f:gif`), so a GIF source without `f:` is written as
    /// WebP (animated when it is), and with `f:auto` for a client without WebP as PNG (one frame);
    /// and `f:auto` never picks a still-only format for an animation when the client accepts WebP.
    /// `accepted`: the offered formats (`http.auto_formats`) the client accepts.
    static func animationOutputFormat(_ options: OutputOptions, source: ImageFormat, accepted: FormatNegotiation,
                                      animated: Bool) -> ImageFormat {
        let chosen = options.resolvedFormat(source: source, accepted: accepted)
        // f:auto gives an animation WebP: never a still-only format, and never an AVIF sequence
        // (an AV1 encode per frame; animated AVIF only for f:avif).
        if options.format == .auto, animated, !chosen.supportsAnimation || chosen == .avif, accepted.formats.contains(.webp) {
            return .webp
        }
        if chosen.isEncodable && (chosen.isNegotiable || options.format != .source && options.format != .auto) { return chosen }
        return options.format == .source ? .webp : .png
    }

    /// The admit step (`RenderStep.admit`); sets how the source is decoded.
    func admit(_ job: RenderJob) throws {
        let header = job.readHeader
        let request = job.request
        let decodeLimits = limits.decodeLimits
        try job.ofSource { try decodeLimits.check(header) }   // one frame must fit, whatever the mode
        switch job.kind.product {
        case .document:
            let plan = Self.placeholderPlan
            try checkBudget(plan, format: job.format, data: job.data, header: header, accepted: .sourceOnly)
            job.decodeOptions = DecodeOptions(minimumSize: Self.minimumDecodeSize(for: plan, header: header), limits: decodeLimits,
                                              page: request.output.page)
        case .image where !job.kind.isAnimated:
            if let fixed = ImagePipeline.fixedOutputFormat(request, source: job.format),
               let planned = request.plannedOutputSize(source: header.displayedSize) {
                try ImagePipeline.checkFormatLimit(fixed, size: planned)
            }
            do {
                try checkBudget(request, format: job.format, data: job.data, header: header, accepted: job.accepted)
            } catch {
                // No variant of this source fits when its smallest decode alone does not.
                guard job.source != nil, overBudgetForEveryVariant(error, format: job.format, data: job.data, header: header) else {
                    throw error
                }
                throw SourceFault(error)
            }
            job.decodeOptions = DecodeOptions(minimumSize: Self.minimumDecodeSize(for: request, header: header), limits: decodeLimits,
                                              page: request.output.page, rasterSize: job.format.isVector ? header.size : nil)
        case .image, .animation:
            try admitAnimation(job, still: header)
        }
        job.mark(.admitted)
    }

    /// The admission of an animated (or GIF) source: its output format, whether it is animated,
    /// the frame asked for, and its limits and budgets over all the frames decoded.
    func admitAnimation(_ job: RenderJob, still: ImageHeader) throws {
        guard let info = job.animation else { preconditionFailure("an animation's structure is read by the header step") }
        let request = job.request
        let outputFormat = Self.animationOutputFormat(request.output, source: job.format, accepted: job.accepted,
                                                      animated: info.frameCount > 1)
        job.outputFormat = outputFormat
        var animate = request.output.frame == nil && info.frameCount > 1 && outputFormat.supportsAnimation
        // max_bytes searches the quality of one encoded image, not of a stream of frames.
        if animate, request.output.maxBytes != nil { throw PipelineError.byteBudgetAnimation }
        let frameIndex = request.output.frame ?? 0
        guard frameIndex < info.frameCount else {
            throw PipelineError.frameOutOfRange(requested: frameIndex, count: info.frameCount)
        }
        if let fixed = ImagePipeline.fixedOutputFormat(request, source: job.format).map({ $0.isEncodable ? $0 : outputFormat }),
           let planned = request.plannedOutputSize(source: still.displayedSize) {
            try ImagePipeline.checkFormatLimit(fixed, size: planned)
        }

        // One frame's plan, in the format it will be written in.
        var planned = request
        planned.output.format = .format(outputFormat)
        // The frame count lets the decode plan count an animation decoder's canvases.
        var planHeader = still
        planHeader.frameCount = info.frameCount
        let perFrame = RequestCost.plan(planned, format: job.format, data: job.data, header: planHeader, accepted: job.accepted,
                                        output: output, marks: stages.watermarks)
        let decodeWork = perFrame.steps.first?.work ?? 0
        if animate, let excess = animationExcess(info, perFrameWork: perFrame.work) {
            guard limits.animationOverLimit == .first_frame else { throw excess }
            animate = false
        }
        job.kind = .animation(animate: animate, frame: frameIndex)
        // Still: frames before n are decoded (composited) but not processed.
        // A frame larger than the canvas costs what its decoder runs through LZW beyond the canvas
        // (GIF: 2 per megapixel, as `RequestCost` prices the canvas), frames 0...n for a still.
        let canvasPixels = info.canvas.width * info.canvas.height
        let beyond = info.decodedPixels.prefix(animate ? info.frameCount : frameIndex + 1).reduce(0) { $0 + max(0, $1 - canvasPixels) }
        let framesWork = 2 * Double(beyond) / 1e6
        let work = (animate ? perFrame.work * Double(info.frameCount) : perFrame.work + decodeWork * Double(frameIndex)) + framesWork
        if work > Double(limits.maxRequestWork) {
            throw BudgetExcess.work(needed: work, limit: limits.maxRequestWork)
        }
        // The animation encoder keeps about three canvases of the result besides the frame (WebP,
        // GIF); aom keeps its look-ahead of frames (about 35 YUV 4:2:0 frames) for an AVIF sequence.
        let perPixel = outputFormat == .avif ? 64 : 12
        let encoderBytes = animate ? perPixel * (request.plannedOutputSize(source: still.displayedSize).map { $0.width * $0.height } ?? 0) : 0
        if perFrame.peakBytes + encoderBytes > limits.maxRequestMemory {
            throw BudgetExcess.memory(needed: perFrame.peakBytes + encoderBytes, limit: limits.maxRequestMemory,
                                      step: animate ? "the animation encoder" : perFrame.peakStep?.name ?? "decode")
        }
    }

    /// The first limit an animated render of `info` is over, as the error that names it; nil within all.
    func animationExcess(_ info: AnimationInfo, perFrameWork: Double) -> (any Error)? {
        if info.frameCount > limits.maxAnimationFrames {
            return DecodeError.overLimit("animation of \(info.frameCount) frames is over \(LimitsConfiguration.Key.maxAnimationFrames.key) (\(limits.maxAnimationFrames))")
        }
        let canvasPixels = info.canvas.width * info.canvas.height
        let pixels = max(canvasPixels.multipliedReportingOverflow(by: info.frameCount).partialValue, info.storedPixels)
        if pixels > limits.maxAnimationPixels {
            return DecodeError.overLimit("animation of \(info.frameCount) frames of \(info.canvas.width)x\(info.canvas.height) "
                + "(\(pixels) pixels) is over \(LimitsConfiguration.Key.maxAnimationPixels.key) (\(limits.maxAnimationPixels))")
        }
        let work = perFrameWork * Double(info.frameCount)
        if work > Double(limits.maxRequestWork) {
            return BudgetExcess.work(needed: work, limit: limits.maxRequestWork)
        }
        return nil
    }
}
