/// What a decoder learns from the header alone, before any pixel is allocated.
public struct ImageHeader: Sendable, Equatable {
    public var format: ImageFormat
    /// Stored size (before EXIF orientation).
    public var width: Int
    public var height: Int
    /// Frames in an animation (1 for a still image).
    public var frameCount: Int
    /// EXIF orientation 1...8 (1 when absent or unknown).
    public var orientation: Int
    public var hasAlpha: Bool
    /// Whether the file embeds a colour profile (ICC, or an AVIF/HEIF colour box), as the
    /// decoder's header walk saw it; nil when the decoder does not say (the cost estimate then
    /// scans the first bytes for the profile's tag).
    public var hasColourProfile: Bool?
    /// The images the file holds that `page:<n>` picks from (TIFF pages, ICO entries); 1 for the others.
    public var pageCount: Int = 1
    /// What rasterising costs beyond its pixels, for a vector source (SVG): read from the
    /// sanitised document, nil for pixel formats.
    public var vector: VectorFacts?

    public init(format: ImageFormat, width: Int, height: Int, frameCount: Int = 1, orientation: Int = 1, hasAlpha: Bool = false) {
        self.format = format
        self.width = width
        self.height = height
        self.frameCount = frameCount
        self.orientation = orientation
        self.hasAlpha = hasAlpha
    }

    public var size: PixelSize { PixelSize(width: width, height: height) }
    /// The size as displayed: width and height swapped for orientations 5...8.
    public var displayedSize: PixelSize { orientation >= 5 ? size.transposed : size }
}

/// How a decoder may decode.
public struct DecodeOptions: Sendable, Equatable {
    /// Smallest stored size the pipeline needs. A decoder that can scale on load (JPEG DCT
    /// scaling, WebP scaled decoding) picks the smallest scale that still covers it. nil: full size.
    public var minimumSize: PixelSize?
    public var limits: DecodeLimits
    /// The image of a file of several (`page:<n>`, 0-based; TIFF pages, ICO entries); nil: the
    /// first page of a TIFF, the largest entry of an ICO.
    public var page: Int?
    /// The size a vector source is rasterised at (`VectorRaster`); nil: its intrinsic size.
    public var rasterSize: PixelSize?

    public init(minimumSize: PixelSize? = nil, limits: DecodeLimits = DecodeLimits(), page: Int? = nil,
                rasterSize: PixelSize? = nil) {
        self.minimumSize = minimumSize
        self.limits = limits
        self.page = page
        self.rasterSize = rasterSize
    }
}

/// A decoded image and what came with it.
public struct DecodedImage: Sendable {
    /// Pixels as stored (orientation not yet applied). Unpremultiplied.
    public var buffer: PixelBuffer
    /// The header's full size; differs from the buffer when the decoder scaled on load.
    public var header: ImageHeader
    /// The embedded ICC profile bytes as found in the file, if any. An RGB (or grey) profile
    /// describes `buffer`; a CMYK JPEG's profile has already been applied by the decoder.
    public var iccProfile: [UInt8]?
    /// EXIF and XMP from the file (orientation tag rewritten to 1), nil when it has neither.
    public var metadata: ImageMetadata?

    public init(buffer: PixelBuffer, header: ImageHeader, iccProfile: [UInt8]? = nil, metadata: ImageMetadata? = nil) {
        self.buffer = buffer
        self.header = header
        self.iccProfile = iccProfile
        self.metadata = metadata
    }
}

/// Why a decoder refused an image.
public enum DecodeError: Error, Equatable, Sendable {
    /// The bytes are broken: truncated, bad markers, CRC errors, libjpeg warnings (strict policy).
    case corrupt(String)
    /// The header is over a configured limit (checked before allocating pixels).
    case overLimit(String)
    /// A valid file of a kind this decoder does not handle (12-bit JPEG, ...).
    case unsupported(String)
}

/// Decodes one format. Implementations live in `KilnCodecs` (`JPEGDecoder`, `PNGDecoder`, `WebPDecoder`).
public protocol ImageDecoding {
    /// Reads the header only: size, frames, orientation. Must not allocate pixel buffers.
    func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader
    /// Decodes, after checking `options.limits` against the header.
    func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage
}

/// A decoder of files that hold several images (TIFF pages, ICO entries): the header of the one
/// `page:<n>` picks. `readHeader(_:)` describes the default image and says how many there are
/// (`ImageHeader.pageCount`); the pipeline checks the page against that count first.
public protocol PagedDecoding {
    /// The header of image `page` (0-based, below the default header's `pageCount`).
    func readHeader(_ data: [UInt8], page: Int) throws(DecodeError) -> ImageHeader
}
