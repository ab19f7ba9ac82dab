import KilnModel

/// One render in flight: what each step of `ImagePipeline.render` (`RenderStep`) reads and leaves
/// for the next. Made per render, dropped with it.
final class RenderJob {
    let request: ImageRequest
    let opened: any OpenedSource
    /// What the client accepts of the offered formats (`f:auto`).
    let accepted: FormatNegotiation
    /// The source's `CacheKey.sourceFailures` when rendering through the caches: what fails for
    /// every variant of this source version is then thrown as `SourceFault`, and the decode runs
    /// under the source's decode marker.
    let source: CacheKey?
    /// What the render makes; the header step finds animations.
    var kind: RenderKind
    var timeline = Timeline()

    /// The source's bytes and sniffed format (`read`).
    var data: [UInt8] = []
    var format: ImageFormat = .jpeg
    /// The header (`header`): for an animation, one frame of its canvas. Its orientation is the
    /// one applied (1 for `ar:0` on images).
    var header: ImageHeader?
    /// The decoder the header was read with.
    var decoder: (any ImageDecoding)?
    /// An animation's structure and decoder (`header`).
    var animation: AnimationInfo?
    var animationDecoder: (any AnimationDecoding)?
    /// An animation's output format, chosen before its frames (`admit`); nil for a still source.
    var outputFormat: ImageFormat?
    /// How the source is decoded (`admit`).
    var decodeOptions: DecodeOptions?

    /// The processed image (`decode`): a still, the chosen frame or the placeholders' small image.
    var picked: PixelBuffer?
    /// The source's metadata kept by `strip:0` (a still's decoder).
    var metadata: ImageMetadata?
    /// The source's RGB colour profile when it is kept (`icc:keep`): the pixels stay in it and the
    /// encoder writes it.
    var keptProfile: [UInt8]?
    /// An animation's encoder, begun with its first frame, and that frame's size.
    var sink: (any AnimationSink)?
    var frameSize: PixelSize?
    /// The window `trim` keeps, found on the first frame processed: every later frame is cut to it.
    var trimBox: (x: Int, y: Int, width: Int, height: Int)?

    /// What `write` made.
    var encoded: [UInt8] = []
    var written: ImageFormat?
    var budgeted: ByteBudgetResult?
    var rendered: RenderedImage?

    init(request: ImageRequest, opened: any OpenedSource, accepted: FormatNegotiation, source: CacheKey?) {
        self.request = request
        self.opened = opened
        self.accepted = accepted
        self.source = source
        self.kind = RenderKind.of(request)
    }

    /// Closes the timeline phase `mark` names for this kind.
    func mark(_ mark: RenderMark) {
        if let name = kind.marks[mark] { timeline.mark(name) }
    }

    /// Runs `body`; rendering through the caches its failure is a `SourceFault`: it fails for
    /// every variant of this source version.
    func ofSource<T>(_ body: () throws -> T) throws -> T {
        try ImagePipeline.ofSource(source, body)
    }

    /// The header, which the header step reads before any step that asks.
    var readHeader: ImageHeader {
        guard let header else { preconditionFailure("the header step runs before \(kind.steps)") }
        return header
    }
}
