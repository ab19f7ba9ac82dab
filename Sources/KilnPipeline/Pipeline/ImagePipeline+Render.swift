import KilnModel

extension ImagePipeline {
    /// Renders `request` without the caches, reading the source once; `accept` is the client's
    /// `Accept` header (for `f:auto`). Throws `LoadError`, `PipelineError`, `DecodeError`,
    /// `ProcessingError` or `EncodeError`.
    public func render(_ request: ImageRequest, accepted: FormatNegotiation = .sourceOnly) throws -> RenderedImage {
        let opened = try stages.source.open(request.sourcePath)
        return try render(request, from: opened, accepted: accepted)
    }

    /// Renders `request` from an opened source: read → sniff → header and limits → decode
    /// (shrinking on load when a resize comes first) → convert to sRGB → orient → processors in
    /// URL order → flatten → encode. A result the output format cannot store (WebP beyond
    /// 16383 px) is refused with `PipelineError.formatLimit`: before decoding when the size is
    /// known from the plan, else right before encoding; `f:auto` picks a format that holds it.
    public func render(_ request: ImageRequest, from opened: any OpenedSource, accepted: FormatNegotiation = .sourceOnly) throws -> RenderedImage {
        try render(request, from: opened, accepted: accepted, source: nil)
    }

    /// `render(_:from:accepted:)` for the caches: with `source` (the source's
    /// `CacheKey.sourceFailures`), failures of the source itself are thrown as `SourceFault`
    /// (remembered for every variant), and the decode runs under the source's decode marker
    /// (`RenderCoordinator.decoding`).
    func render(_ request: ImageRequest, from opened: any OpenedSource, accepted: FormatNegotiation,
                source: CacheKey?) throws -> RenderedImage {
        if request.output.document != nil {   // ImagePipeline+Document.swift
            return try renderDocument(request, from: opened, source: source)
        }
        // What fails here fails for every variant of this source version.
        func ofSource<T>(_ body: () throws -> T) throws -> T { try ImagePipeline.ofSource(source, body) }
        var timeline = Timeline()
        let (data, format) = try readSource(opened, source: source, timeline: &timeline)

        let decoder = stages.decoders.decoder(for: format)
        var header = try ofSource { try decoder.readHeader(data) }
        let orientation = header.orientation
        if !request.autorotate { header.orientation = 1 }
        if format == .gif || header.frameCount > 1 {   // ImagePipeline+Animation.swift
            return try renderAnimation(request, opened: opened, data: data, format: format,
                                       orientation: header.orientation, accepted: accepted, timeline: timeline,
                                       source: source)
        }
        let decodeLimits = limits.decodeLimits
        try ofSource { try decodeLimits.check(header) }
        // Format limits are known from the plan: refuse before decoding (f:auto adapts later).
        if let fixed = ImagePipeline.fixedOutputFormat(request, source: format),
           let planned = request.plannedOutputSize(source: header.displayedSize) {
            try ImagePipeline.checkFormatLimit(fixed, size: planned)
        }
        do {
            try checkBudget(request, format: format, data: data, header: header, accepted: accepted)   // CostBudget.swift
        } catch {
            // No variant of this source fits when its smallest decode alone does not.
            guard source != nil, overBudgetForEveryVariant(error, format: format, data: data, header: header) else { throw error }
            throw SourceFault(error)
        }
        let options = DecodeOptions(minimumSize: ImagePipeline.minimumDecodeSize(for: request, header: header),
                                    limits: decodeLimits)
        let decoded = try ofSource {
            try decodeMarked(source) {
                try observer?.enter(.decode)
                return try decoder.decode(data, options: options)
            }
        }
        timeline.mark("decode")

        var image = decoded.buffer
        if let profile = decoded.iccProfile {
            try observer?.enter(.colour)
            image = stages.colorConverter.convertToSRGB(image, profile: profile)
            timeline.mark("colour")
        }
        if request.autorotate && orientation != 1 { image = stages.orienter.orient(image, exifOrientation: orientation) }
        var logical = header.displayedSize
        for operation in request.operations {
            try observer?.enter(.process, detail: operation.identifier)
            let context = ProcessingContext(logicalSize: logical, maxOutputPixels: limits.maxOutputPixels)
            image = try stages.processors.processor(for: operation).process(image, context: context)
            logical = image.size
        }
        var outputFormat = request.output.resolvedFormat(source: format, accepted: accepted, size: image.size,
                                                         hasAlpha: image.hasAlpha)
        // f:auto never answers with a format this server cannot write (libavif not installed).
        if request.output.format == .auto && !stages.encoders.canEncode(outputFormat) {
            outputFormat = request.output.resolvedFormat(source: format, accepted: accepted.filtered { stages.encoders.canEncode($0) },
                                                         size: image.size, hasAlpha: image.hasAlpha)
        }
        // The rendered size is what counts (a plan may be unknown): never hand the encoder more.
        try ImagePipeline.checkFormatLimit(outputFormat, size: image.size)
        if image.hasAlpha && !outputFormat.supportsAlpha {
            image = stages.flattener.flatten(image, onto: output.flattenBackground(for: request.output))
        }
        timeline.mark("process")

        try observer?.enter(.encode)
        let encodeOptions = output.encodeOptions(format: outputFormat, request: request.output, metadata: decoded.metadata)
        let budgeted = try encode(image, options: encodeOptions, budget: request.output.maxBytes)   // ByteBudget.swift
        let encoded = budgeted.data
        try checkOutputBytes(encoded)
        timeline.mark("encode")
        if request.output.maxBytes != nil { timeline.describe("encode", budgeted.timingDescription) }
        observer?.resultEncoded(format: outputFormat, bytes: encoded.count)
        var rendered = RenderedImage(data: encoded, format: outputFormat, sourceIdentity: opened.identity,
                                     size: image.size, timeline: timeline)
        rendered.quality = budgeted.quality
        return rendered
    }

    /// Runs `body`; with `source` (rendering through the caches) its failure is a `SourceFault`:
    /// it fails for every variant of this source version.
    static func ofSource<T>(_ source: CacheKey?, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw source == nil ? error : SourceFault(error) }
    }

    /// Reads the opened source and sniffs its format (timed as `load` or `fetch`, and `sniff`).
    func readSource(_ opened: any OpenedSource, source: CacheKey?, timeline: inout Timeline) throws -> (data: [UInt8], format: ImageFormat) {
        try observer?.enter(.load)
        let fetchesBefore = stages.sourceActivity?.count
        let data = try Self.ofSource(source) { try opened.readAll() }
        timeline.mark(stages.sourceActivity?.count != fetchesBefore ? "fetch" : "load")
        try observer?.enter(.sniff)
        let sniffed = stages.sniffer.sniff(data)
        guard let format = sniffed.format else {
            return try Self.ofSource(source) { throw PipelineError.unsupportedType(sniffed.mimeType) }
        }
        observer?.sourceRead(format: format, bytes: data.count)
        timeline.mark("sniff")
        return (data, format)
    }

    /// Runs `decode` under the source's decode marker when rendering through the caches.
    func decodeMarked<T>(_ source: CacheKey?, _ decode: () throws -> T) throws -> T {
        guard let source, let cache else { return try decode() }
        return try cache.decoding(source, decode)
    }

    /// `decodeMarked(_:_:)` for a decode that hands its steps to the caller (`DecodeMarking`).
    func decodeMarked<T>(_ source: CacheKey?, stepwise decode: (DecodeMarking) throws -> T) throws -> T {
        guard let source, let cache else { return try decode(DecodeMarking(lock: nil, until: 0)) }
        return try cache.decoding(source, decode)
    }

    /// Shrink-on-load keeps at least this many decoded pixels per output pixel on each axis.
    /// DCT scaling blurs a little more than Lanczos does; when the scaled decode is barely larger
    /// than the output (1920 → 960 for 800 wide), SSIM against a full decode fell to 0.980. With
    /// 1.25 such cases decode one step larger, which costs little: 1/2 and 1/4 DCT scaling save
    /// only 5–20 % of the decode (NOTES), while the 1/8 cases that save most keep their factor.
    static let shrinkOnLoadMargin = 1.25

    /// The smallest stored size that still covers what the leading resize needs (shrink-on-load),
    /// nil when the first operation is not a resize or nothing would be gained.
    public static func minimumDecodeSize(for request: ImageRequest, header: ImageHeader) -> PixelSize? {
        guard let resize = request.leadingResize else { return nil }
        let displayed = header.displayedSize
        let plan = ResizePlan(options: resize, source: displayed)
        // Output pixels per source pixel on each axis; the decoded image must keep at least that.
        let fx = Double(plan.output.width) / plan.sourceWidth
        let fy = Double(plan.output.height) / plan.sourceHeight
        let m = shrinkOnLoadMargin
        let needed = PixelSize(width: min(displayed.width, Int((Double(displayed.width) * fx * m).rounded(.up))),
                               height: min(displayed.height, Int((Double(displayed.height) * fy * m).rounded(.up))))
        guard needed.width < displayed.width || needed.height < displayed.height else { return nil }
        return header.orientation >= 5 ? needed.transposed : needed
    }
}
