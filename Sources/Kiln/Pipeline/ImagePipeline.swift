import KilnCore

/// Runs one request through the stages: load → sniff → header and limits → decode (shrinking on
/// load when a resize comes first) → convert to sRGB → orient → processors in URL order → flatten → encode.
///
/// Synchronous and single-threaded by design: a worker process runs one request at a time.
public final class ImagePipeline {
    public let stages: PipelineStages
    public let limits: LimitsConfiguration
    public let output: OutputConfiguration

    public init(stages: PipelineStages, limits: LimitsConfiguration = .init(), output: OutputConfiguration = .init()) {
        self.stages = stages
        self.limits = limits
        self.output = output
    }

    /// Renders `request`; `accept` is the client's `Accept` header (for `f:auto`).
    /// Throws `LoadError`, `PipelineError`, `DecodeError`, `ProcessingError` or `EncodeError`.
    public func render(_ request: ImageRequest, accept: String? = nil) throws -> RenderedImage {
        var timeline = Timeline()
        let source = try stages.source.load(request.sourcePath)
        timeline.mark("load")

        let sniffed = stages.sniffer.sniff(source.data)
        guard let format = sniffed.format else { throw PipelineError.unsupportedType(sniffed.mimeType) }
        timeline.mark("sniff")

        let decoder = stages.decoder(format)
        let header = try decoder.readHeader(source.data)
        let decodeLimits = limits.decodeLimits
        try decodeLimits.check(header)
        let options = DecodeOptions(minimumSize: ImagePipeline.minimumDecodeSize(for: request, header: header),
                                    limits: decodeLimits)
        let decoded = try decoder.decode(source.data, options: options)
        timeline.mark("decode")

        var image = decoded.buffer
        if let profile = decoded.iccProfile {
            image = stages.colorConverter.convertToSRGB(image, profile: profile)
            timeline.mark("colour")
        }
        if header.orientation != 1 { image = stages.orient(image, header.orientation) }
        var logical = header.displayedSize
        for operation in request.operations {
            let context = ProcessingContext(logicalSize: logical, maxOutputPixels: limits.maxOutputPixels)
            image = try stages.processor(operation).process(image, context: context)
            logical = image.size
        }
        let outputFormat = request.output.resolvedFormat(source: format, accept: accept)
        if image.hasAlpha && !outputFormat.supportsAlpha { image = stages.flatten(image, output.background) }
        timeline.mark("process")

        let encodeOptions = output.encodeOptions(format: outputFormat, quality: request.output.quality)
        let data = try stages.encoder(outputFormat).encode(image, options: encodeOptions)
        timeline.mark("encode")
        return RenderedImage(data: data, format: outputFormat, sourceIdentity: source.identity,
                             size: image.size, timeline: timeline)
    }

    /// The smallest stored size that still covers what the leading resize needs (shrink-on-load),
    /// nil when the first operation is not a resize or nothing would be gained.
    static func minimumDecodeSize(for request: ImageRequest, header: ImageHeader) -> PixelSize? {
        guard let resize = request.leadingResize else { return nil }
        let displayed = header.displayedSize
        let plan = ResizePlan(options: resize, source: displayed)
        // Output pixels per source pixel on each axis; the decoded image must keep at least that.
        let fx = Double(plan.output.width) / plan.sourceWidth
        let fy = Double(plan.output.height) / plan.sourceHeight
        let needed = PixelSize(width: min(displayed.width, Int((Double(displayed.width) * fx).rounded(.up))),
                               height: min(displayed.height, Int((Double(displayed.height) * fy).rounded(.up))))
        guard needed.width < displayed.width || needed.height < displayed.height else { return nil }
        return header.orientation >= 5 ? needed.transposed : needed
    }
}
