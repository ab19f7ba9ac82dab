import KilnCore

/// The replaceable parts of the pipeline (Nuke's pipeline configuration): who loads, sniffs,
/// decodes, colour-converts, processes and encodes. `PipelineStages.default` wires the libjpeg-turbo, libpng,
/// libwebp and libmagic implementations; tests and custom builds swap single stages.
public struct PipelineStages {
    public var source: any SourceLoading
    public var sniffer: any TypeSniffing
    public var decoder: (ImageFormat) -> any ImageDecoding
    public var encoder: (ImageFormat) -> any ImageEncoding
    public var processor: (Operation) -> any ImageProcessing
    /// Converts decoded pixels from their embedded ICC profile to sRGB (outputs carry no profile).
    public var colorConverter: any ColorConverting
    /// Applies EXIF orientation 1...8 to stored pixels.
    public var orient: (PixelBuffer, Int) -> PixelBuffer
    /// Composites RGBA onto an opaque RGB background, for formats without alpha.
    public var flatten: (PixelBuffer, [UInt8]) -> PixelBuffer

    public init(source: any SourceLoading, sniffer: any TypeSniffing,
                decoder: @escaping (ImageFormat) -> any ImageDecoding,
                encoder: @escaping (ImageFormat) -> any ImageEncoding,
                processor: @escaping (Operation) -> any ImageProcessing,
                colorConverter: any ColorConverting,
                orient: @escaping (PixelBuffer, Int) -> PixelBuffer,
                flatten: @escaping (PixelBuffer, [UInt8]) -> PixelBuffer) {
        self.source = source
        self.sniffer = sniffer
        self.decoder = decoder
        self.encoder = encoder
        self.processor = processor
        self.colorConverter = colorConverter
        self.orient = orient
        self.flatten = flatten
    }
}
