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
    ///
    /// The one render path: stills, animations and documents run the steps their `RenderKind`
    /// lists (`RenderStep`); where kinds differ, a step reads it from the kind.
    func render(_ request: ImageRequest, from opened: any OpenedSource, accepted: FormatNegotiation,
                source: CacheKey?) throws -> RenderedImage {
        let job = RenderJob(request: request, opened: opened, accepted: accepted, source: source)
        var next = 0
        while next < job.kind.steps.count {   // the header step may turn a still into an animation
            try run(job.kind.steps[next], job)
            next += 1
        }
        guard let rendered = job.rendered else { preconditionFailure("\(job.kind.steps) wrote nothing") }
        return rendered
    }

    func run(_ step: RenderStep, _ job: RenderJob) throws {
        switch step {
        case .read: try read(job)
        case .header: try readHeader(job)
        case .admit: try admit(job)   // ImagePipeline+Admission.swift
        case .decode: try decodeFrames(job)   // ImagePipeline+Frames.swift
        case .write: try write(job)   // ImagePipeline+Write.swift
        case .verify: try verify(job)
        }
    }

    /// Reads the source and sniffs its format (timed as `load` or `fetch`, and `sniff`).
    func read(_ job: RenderJob) throws {
        try observer?.enter(.load)
        let fetchesBefore = stages.sourceActivity?.count
        let data = try job.ofSource { try job.opened.readAll() }
        job.timeline.mark(stages.sourceActivity?.count != fetchesBefore ? "fetch" : "load")
        try observer?.enter(.sniff)
        let sniffed = stages.sniffer.sniff(data)
        guard let format = sniffed.format else {
            return try job.ofSource { throw PipelineError.unsupportedType(sniffed.mimeType) }
        }
        observer?.sourceRead(format: format, bytes: data.count)
        job.timeline.mark("sniff")
        job.data = data
        job.format = format
    }

    /// Reads the header; a GIF or a source of more than one frame becomes an animation, whose
    /// structure is read here and whose header is one frame of its canvas. `page:<n>` picks the
    /// image of a file of several (`PagedDecoding`); a vector source's header is the raster the
    /// request needs (`VectorRaster`), which the rest of the render treats as the source's size.
    func readHeader(_ job: RenderJob) throws {
        let decoder = stages.decoders.decoder(for: job.format)
        job.decoder = decoder
        var header = try job.ofSource { try decoder.readHeader(job.data) }
        if let page = job.request.output.page {
            guard page < header.pageCount else {
                throw PipelineError.pageOutOfRange(requested: page, count: header.pageCount)
            }
            // page:0 too: an ICO's default is its largest entry, not its first.
            if let paged = decoder as? any PagedDecoding {
                header = try job.ofSource { try paged.readHeader(job.data, page: page) }
            }
        }
        if job.format.isVector, job.kind.product == .image, let facts = header.vector {
            let raster = VectorRaster.size(intrinsicWidth: facts.intrinsicWidth, intrinsicHeight: facts.intrinsicHeight,
                                           request: job.request)
            header.width = raster.width
            header.height = raster.height
        }
        if job.kind.appliesAutorotate && !job.request.autorotate { header.orientation = 1 }
        if job.kind.product == .image, job.format == .gif || header.frameCount > 1 {
            guard let frames = stages.animations.animationDecoder(for: job.format) else {
                throw PipelineError.unsupportedType(job.format.mimeType)
            }
            let info = try job.ofSource { try frames.readAnimation(job.data) }
            job.animation = info
            job.animationDecoder = frames
            header = ImageHeader(format: job.format, width: info.canvas.width, height: info.canvas.height,
                                 frameCount: 1, orientation: header.orientation, hasAlpha: info.hasAlpha)
            job.kind = .animation(animate: info.frameCount > 1, frame: job.request.output.frame ?? 0)
        }
        job.header = header
        job.mark(.header)
    }

    /// Checks the encoded bytes against `limits.max_output_bytes`, reports them and makes the result.
    func verify(_ job: RenderJob) throws {
        guard let written = job.written, let size = job.frameSize else { preconditionFailure("verify runs after write") }
        try checkOutputBytes(job.encoded)
        job.mark(.encoded)
        if let budgeted = job.budgeted, job.request.output.maxBytes != nil {
            job.timeline.describe("encode", budgeted.timingDescription)
        }
        observer?.resultEncoded(format: written, bytes: job.encoded.count)
        var rendered = RenderedImage(data: job.encoded, format: written, sourceIdentity: job.opened.identity, size: size,
                                     timeline: job.timeline)
        rendered.quality = job.budgeted?.quality
        job.rendered = rendered
    }

    /// Runs `body`; with `source` (rendering through the caches) its failure is a `SourceFault`:
    /// it fails for every variant of this source version.
    static func ofSource<T>(_ source: CacheKey?, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw source == nil ? error : SourceFault(error) }
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
