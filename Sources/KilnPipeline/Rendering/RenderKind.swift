import KilnModel

/// The steps of the one render path (`ImagePipeline.render`), in order. Every kind of render runs
/// the list its `RenderKind` gives; the steps ask the kind where kinds differ.
enum RenderStep: String, Sendable, CaseIterable {
    /// Read the source and sniff its format (`load` or `fetch`, and `sniff`).
    case read
    /// Read the header; an animation's structure (frames, canvas, loop) without a pixel.
    case header
    /// Refuse what cannot be made: the decode limits, the output format's size limit from the
    /// plan, and the request budgets (memory, work; an animation's frames).
    case admit
    /// Decode the frames the kind names, each through colour conversion, orientation and the
    /// kind's processing (`ImagePipeline.processFrame`); an animation's go on to the encoder.
    case decode
    /// Write the product: encode the image (under `max_bytes`), finish the animation, or write
    /// the document.
    case write
    /// Check the encoded bytes against `limits.max_output_bytes` and report them.
    case verify
}

/// The points of a render that may close a phase of its timeline (`Server-Timing`).
enum RenderMark: Sendable {
    case header, admitted, decoded, coloured, processed, encoded, written
}

/// What one render makes, as data: a still image, an animation (or one frame of it), or a
/// document about the source. One render path runs `steps` for every kind.
struct RenderKind: Equatable, Sendable {
    /// What the render writes.
    enum Product: Equatable, Sendable {
        /// One encoded image: a still source, or one frame of an animation.
        case image
        /// An animated file, every frame through the processors.
        case animation
        /// `f:json`, `f:blurhash`, `f:thumbhash`.
        case document(DocumentKind)
    }

    /// Which frames the decode step processes.
    enum Frames: Equatable, Sendable {
        /// The decoder's one image.
        case still
        /// Every frame of an animation.
        case every
        /// Frame n of an animation; the frames before it are decoded (composited) only.
        case only(Int)
    }

    /// What each frame goes through after colour conversion and orientation.
    enum Processing: Equatable, Sendable {
        /// The request's operations, in URL order.
        case request
        /// A resize to fit a square of this side, when the image is larger (the placeholders).
        case fitWithin(Int)
    }

    var product: Product
    var frames: Frames
    var processing: Processing
    /// The steps, in order.
    var steps: [RenderStep]
    /// The timeline phase each mark closes; a mark without a name adds its time to the next phase.
    var marks: [RenderMark: String]
    /// Whether `ar:0` resets the orientation: images are drawn as stored; documents report it.
    var appliesAutorotate: Bool

    static let imageSteps: [RenderStep] = [.read, .header, .admit, .decode, .write, .verify]

    /// A still source. `render` finds out after the header step whether the source is animated.
    static let still = RenderKind(product: .image, frames: .still, processing: .request, steps: imageSteps,
                                  marks: [.decoded: "decode", .coloured: "colour", .processed: "process", .encoded: "encode"],
                                  appliesAutorotate: true)

    /// An animated source (or any GIF): animated output, or frame `frame` as a still.
    static func animation(animate: Bool, frame: Int) -> RenderKind {
        RenderKind(product: animate ? .animation : .image, frames: animate ? .every : .only(frame), processing: .request,
                   steps: imageSteps, marks: [.admitted: "sniff", .processed: "process", .encoded: "encode"],
                   appliesAutorotate: true)
    }

    /// A document; the placeholders need a small decode, `f:json` alone none.
    static func document(_ kind: DocumentKind, pixels: Bool) -> RenderKind {
        RenderKind(product: .document(kind), frames: .still, processing: .fitWithin(ImagePipeline.placeholderSide),
                   steps: pixels ? [.read, .header, .admit, .decode, .write] : [.read, .header, .write],
                   marks: [.header: "header", .processed: "decode", .written: kind == .json ? "write" : kind.rawValue],
                   appliesAutorotate: false)
    }

    /// The kind a request starts as, before its source is read.
    static func of(_ request: ImageRequest) -> RenderKind {
        guard let document = request.output.document else { return .still }
        return .document(document, pixels: document.needsPixels(placeholders: request.output.placeholders))
    }

    /// Whether the kind renders frames of an animated source.
    var isAnimated: Bool { frames != .still }
}
