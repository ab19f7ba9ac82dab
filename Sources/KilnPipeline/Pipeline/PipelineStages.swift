import KilnModel
import KilnProcessing

/// The replaceable parts of the pipeline (Nuke's pipeline configuration): who loads, sniffs,
/// decodes, colour-converts, orients, processes, flattens and encodes. Every stage is a protocol
/// (`Seams/`); `PipelineStages.standard` wires the libjpeg-turbo, libpng, libwebp, libmagic and
/// KilnProcessing implementations; tests and custom builds swap single stages.
public struct PipelineStages {
    public var source: any SourceLoading
    public var sniffer: any TypeSniffing
    public var decoders: any ImageDecoderProviding
    public var encoders: any ImageEncoderProviding
    public var processors: any ProcessorProviding
    /// Converts decoded pixels from their embedded ICC profile to sRGB (outputs carry no profile).
    public var colorConverter: any ColorConverting
    /// Applies EXIF orientation 1...8 to stored pixels.
    public var orienter: any Orienting
    /// Composites RGBA onto an opaque RGB background, for formats without alpha.
    public var flattener: any Flattening
    /// Frame-by-frame decoders and encoders of animations (GIF, animated WebP).
    public var animations: any AnimationCodecProviding = CodecRegistry()
    /// What reports the source stage's remote reads (nil: local files only): the pipeline times
    /// them as `fetch` and hands them to its observer after each request.
    public var sourceActivity: (any SourceActivity)?
    /// What keeps the source stage's remote reads on disk for every worker (`SourceSharing`);
    /// nil: local files only.
    public var sourceSharing: (any SourceSharing)?
    /// The configured watermarks (`[watermarks]`), decoded: `processors` draws them and the
    /// cache key carries their identity (`WatermarkLibrary.identity(for:)`).
    public var watermarks = WatermarkLibrary()

    public init(source: any SourceLoading, sniffer: any TypeSniffing,
                decoders: any ImageDecoderProviding, encoders: any ImageEncoderProviding,
                processors: any ProcessorProviding, colorConverter: any ColorConverting,
                orienter: any Orienting, flattener: any Flattening) {
        self.source = source
        self.sniffer = sniffer
        self.decoders = decoders
        self.encoders = encoders
        self.processors = processors
        self.colorConverter = colorConverter
        self.orienter = orienter
        self.flattener = flattener
    }
}
