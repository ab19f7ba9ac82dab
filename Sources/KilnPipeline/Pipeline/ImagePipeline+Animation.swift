import KilnModel
import KilnProcessing

/// The animated path of `render`: GIF sources (one frame or many) and animated WebP.
///
/// Frames stream: each is decoded composited onto the canvas, converted to sRGB (a WebP ICC
/// profile), oriented, put through every processor of the request in URL order and handed to the
/// encoder, then dropped. Memory is the decoder's canvas, one frame in flight and the encoder's
/// state (encoded frames only), whatever the frame count.
///
/// - Animated output (animated WebP) keeps each frame's duration and the loop count.
/// - A still output (`f:jpeg`, `f:png`, any `frame:<n>`) decodes up to frame n (compositing needs
///   the frames before it) and renders that one frame like a still source.
/// - Limits, from the structure before any frame is decoded: the canvas against
///   `limits.max_pixels` (always a 413), and for animated output the frame count
///   (`limits.max_animation_frames`), canvas × frames and the frames' stored area
///   (`limits.max_animation_pixels`) and the work of all frames (`limits.max_request_work`):
///   over one of these, `limits.animation_over_limit` refuses (413 naming it) or renders the
///   first frame alone.
extension ImagePipeline {
    /// The output format for an animated (or GIF) source. As `OutputOptions.resolvedFormat`, except:
    /// GIF is read only, so a GIF source without `f:` is written as WebP (animated when it is),
    /// and with `f:auto` for a client without WebP as PNG (one frame); and `f:auto` never picks a
    /// still-only format for an animation when the client accepts WebP.
    /// `accepted`: the offered formats (`http.auto_formats`) the client accepts.
    static func animationOutputFormat(_ options: OutputOptions, source: ImageFormat, accepted: FormatNegotiation,
                                      animated: Bool) -> ImageFormat {
        let chosen = options.resolvedFormat(source: source, accepted: accepted)
        if options.format == .auto, animated, !chosen.supportsAnimation, accepted.formats.contains(.webp) {
            return .webp
        }
        if chosen.isEncodable { return chosen }
        return options.format == .source ? .webp : .png
    }

    func renderAnimation(_ request: ImageRequest, opened: any OpenedSource, data: [UInt8], format: ImageFormat,
                         orientation: Int, accepted: FormatNegotiation, timeline: Timeline,
                         source: CacheKey? = nil) throws -> RenderedImage {
        // With `source` (rendering through the caches), what fails for every variant of this
        // source version is thrown as `SourceFault`: the structure, the canvas, a frame's decode.
        func ofSource<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch { throw source == nil ? error : SourceFault(error) }
        }
        var timeline = timeline
        guard let decoder = stages.animations.animationDecoder(for: format) else {
            throw PipelineError.unsupportedType(format.mimeType)
        }
        let info = try ofSource { try decoder.readAnimation(data) }
        let still = ImageHeader(format: format, width: info.canvas.width, height: info.canvas.height,
                                frameCount: 1, orientation: orientation, hasAlpha: info.hasAlpha)
        try ofSource { try limits.decodeLimits.check(still) }   // one frame must fit, whatever the mode
        let outputFormat = Self.animationOutputFormat(request.output, source: format, accepted: accepted,
                                                      animated: info.frameCount > 1)
        var animate = request.output.frame == nil && info.frameCount > 1 && outputFormat.supportsAnimation
        // max_bytes searches the quality of one encoded image, not of a stream of frames.
        if animate, request.output.maxBytes != nil { throw PipelineError.byteBudgetAnimation }
        let frameIndex = request.output.frame ?? 0
        guard frameIndex < info.frameCount else {
            throw PipelineError.frameOutOfRange(requested: frameIndex, count: info.frameCount)
        }
        if let fixed = ImagePipeline.fixedOutputFormat(request, source: format).map({ $0.isEncodable ? $0 : outputFormat }),
           let planned = request.plannedOutputSize(source: still.displayedSize) {
            try ImagePipeline.checkFormatLimit(fixed, size: planned)
        }

        // One frame's plan, in the format it will be written in.
        var planned = request
        planned.output.format = .format(outputFormat)
        // The frame count lets the decode plan count an animation decoder's canvases.
        var planHeader = still
        planHeader.frameCount = info.frameCount
        let perFrame = RequestCost.plan(planned, format: format, data: data, header: planHeader, accepted: accepted, output: output)
        let decodeWork = perFrame.steps.first?.work ?? 0
        if animate, let excess = animationExcess(info, perFrameWork: perFrame.work) {
            guard limits.animationOverLimit == .first_frame else { throw excess }
            animate = false
        }
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
        // The animation encoder keeps about three canvases of the result besides the frame.
        let encoderBytes = animate ? 12 * (request.plannedOutputSize(source: still.displayedSize).map { $0.width * $0.height } ?? 0) : 0
        if perFrame.peakBytes + encoderBytes > limits.maxRequestMemory {
            throw BudgetExcess.memory(needed: perFrame.peakBytes + encoderBytes, limit: limits.maxRequestMemory,
                                      step: animate ? "the animation encoder" : perFrame.peakStep?.name ?? "decode")
        }
        timeline.mark("sniff")

        let encodeOptions = output.encodeOptions(format: outputFormat, request: request.output, metadata: nil)
        var sink: (any AnimationSink)?
        var picked: PixelBuffer?
        var frameSize = still.displayedSize
        var trimBox: TrimBox?
        try observer?.enter(.decode)
        do {
            // A kill while a frame is processed or encoded is the variant's, not the source's.
            try decodeMarked(source, stepwise: { marking in
                try decoder.decodeFrames(data) { frame in
                    if !animate && frame.index < frameIndex { return true }   // composited only
                    return try marking.outsideDecode {
                        let image = try self.processFrame(frame, request: request, orientation: orientation,
                                                          iccProfile: info.iccProfile, canvas: still.displayedSize,
                                                          trimBox: &trimBox)
                        guard animate else {
                            picked = image
                            return false
                        }
                        if sink == nil {
                            try ImagePipeline.checkFormatLimit(outputFormat, size: image.size)
                            guard let encoder = self.stages.animations.animationEncoder(for: outputFormat) else {
                                throw EncodeError.failed("no animation encoder for \(outputFormat.displayName)")
                            }
                            sink = try encoder.begin(size: image.size, loopCount: info.loopCount, options: encodeOptions)
                            frameSize = image.size
                        }
                        try self.observer?.enter(.encode, detail: "frame \(frame.index)")
                        try sink?.add(image, durationMilliseconds: frame.durationMilliseconds)
                        return true
                    }
                }
            })
        } catch let error as DecodeError where source != nil {
            throw SourceFault(error)   // the decoder's (the frames' own steps throw other errors)
        }
        timeline.mark("process")

        let encoded: [UInt8]
        var budgeted: ByteBudgetResult?
        var size: PixelSize
        var written = outputFormat
        if let sink {
            try observer?.enter(.encode)
            encoded = try sink.finish()
            size = frameSize
        } else {
            guard var image = picked else { throw DecodeError.corrupt("the animation has no frame \(frameIndex)") }
            written = request.output.format == .auto
                ? request.output.resolvedFormat(source: outputFormat, accepted: accepted, size: image.size, hasAlpha: image.hasAlpha)
                : outputFormat
            if !written.isEncodable { written = image.hasAlpha ? .png : .jpeg }
            try ImagePipeline.checkFormatLimit(written, size: image.size)
            if image.hasAlpha && !written.supportsAlpha {
                image = stages.flattener.flatten(image, onto: output.flattenBackground(for: request.output))
            }
            try observer?.enter(.encode)
            let options = output.encodeOptions(format: written, request: request.output, metadata: nil)
            budgeted = try encode(image, options: options, budget: request.output.maxBytes)   // ByteBudget.swift
            encoded = budgeted?.data ?? []
            size = image.size
        }
        try checkOutputBytes(encoded)
        timeline.mark("encode")
        if let budgeted, request.output.maxBytes != nil { timeline.describe("encode", budgeted.timingDescription) }
        observer?.resultEncoded(format: written, bytes: encoded.count)
        var rendered = RenderedImage(data: encoded, format: written, sourceIdentity: opened.identity, size: size, timeline: timeline)
        rendered.quality = budgeted?.quality
        return rendered
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

    /// The window `trim` keeps, in frame pixels.
    typealias TrimBox = (x: Int, y: Int, width: Int, height: Int)

    /// One frame through colour conversion, orientation and the request's processors.
    /// `trim` finds its box on the first frame processed and cuts every later frame to the same
    /// box (`trimBox`), so that all frames keep one size.
    func processFrame(_ frame: AnimationFrame, request: ImageRequest, orientation: Int, iccProfile: [UInt8]?,
                      canvas: PixelSize, trimBox: inout TrimBox?) throws -> PixelBuffer {
        var image = frame.buffer
        if let iccProfile { image = stages.colorConverter.convertToSRGB(image, profile: iccProfile) }
        if orientation != 1 { image = stages.orienter.orient(image, exifOrientation: orientation) }
        var logical = canvas
        for operation in request.operations {
            try observer?.enter(.process, detail: "\(operation.identifier) frame \(frame.index)")
            if case .trim(let options) = operation {
                let box = trimBox ?? Trim(options).box(in: image) ?? (0, 0, image.width, image.height)
                trimBox = box
                image = Crop.cut(image, x: box.x, y: box.y, width: box.width, height: box.height)
                logical = image.size
                continue
            }
            let context = ProcessingContext(logicalSize: logical, maxOutputPixels: limits.maxOutputPixels)
            image = try stages.processors.processor(for: operation).process(image, context: context)
            logical = image.size
        }
        return image
    }
}
