/// What a decoder learns of an animation before any frame is decoded: from the container (WebP)
/// or from a walk over the block structure (GIF) that allocates no pixels.
public struct AnimationInfo: Sendable, Equatable {
    /// The canvas every frame is composited onto (the size of every decoded frame).
    public var canvas: PixelSize
    /// Frames in the file (1 for a still image).
    public var frameCount: Int
    /// How often the animation plays, as WebP stores it: 0 forever, n plays in all. A GIF's
    /// NETSCAPE2.0 count n (repetitions after the first play, as browsers read it) becomes n + 1,
    /// 0 stays 0, and a GIF without the extension (played once) becomes 1.
    public var loopCount: Int
    /// Whether a composited frame can have transparent pixels.
    public var hasAlpha: Bool
    /// Sum of the stored frames' areas (a GIF frame may be larger than its canvas); the decode
    /// work, checked against the animation pixel limit before decoding.
    public var storedPixels: Int
    /// Per frame, the pixels decoding it runs through (a GIF frame clipped to the canvas as its
    /// decoder does); empty when every frame costs the canvas. The still path (`frame:n`) prices
    /// frames 0...n by it.
    public var decodedPixels: [Int]
    /// The embedded RGB ICC profile (WebP's ICCP chunk), applied to every frame; GIF has none.
    public var iccProfile: [UInt8]?

    public init(canvas: PixelSize, frameCount: Int, loopCount: Int, hasAlpha: Bool, storedPixels: Int = 0,
                decodedPixels: [Int] = [], iccProfile: [UInt8]? = nil) {
        self.decodedPixels = decodedPixels
        self.iccProfile = iccProfile
        self.canvas = canvas
        self.frameCount = frameCount
        self.loopCount = loopCount
        self.hasAlpha = hasAlpha
        self.storedPixels = storedPixels
    }
}

/// One frame as it is shown: composited onto the canvas (disposal and transparency applied).
public struct AnimationFrame: Sendable {
    /// 0-based position in the file.
    public var index: Int
    /// Canvas-sized, unpremultiplied RGBA when the animation has alpha, else RGB.
    public var buffer: PixelBuffer
    /// How long the frame shows, as stored (a GIF's delay in centiseconds × 10; 0 stays 0).
    public var durationMilliseconds: Int

    public init(index: Int, buffer: PixelBuffer, durationMilliseconds: Int) {
        self.index = index
        self.buffer = buffer
        self.durationMilliseconds = durationMilliseconds
    }
}

/// Decodes an animation one frame at a time (memory: the canvas and one frame, never all frames).
/// Implementations live in `KilnCodecs` (`GIFDecoder`, `WebPAnimationDecoder`).
public protocol AnimationDecoding {
    /// The canvas, frame count, loop count and alpha, read without decoding pixels. Throws
    /// `DecodeError.corrupt` for truncated or malformed structure.
    func readAnimation(_ data: [UInt8]) throws(DecodeError) -> AnimationInfo
    /// Calls `body` with each frame composited onto the canvas, in file order, until `body`
    /// returns false or the frames end. Throws `DecodeError` for bad bytes, and what `body` throws.
    func decodeFrames(_ data: [UInt8], _ body: (AnimationFrame) throws -> Bool) throws
}

/// Collects frames into one animated file; made per result with `AnimationEncoding.begin`.
public protocol AnimationSink: AnyObject {
    /// Adds the next frame (every frame the same size, RGB or RGBA) shown for `durationMilliseconds`.
    func add(_ frame: PixelBuffer, durationMilliseconds: Int) throws(EncodeError)
    /// The encoded file.
    func finish() throws(EncodeError) -> [UInt8]
}

/// Encodes animations (`WebPAnimationEncoder`).
public protocol AnimationEncoding {
    /// A sink for frames of `size`, played `loopCount` times (0: forever).
    func begin(size: PixelSize, loopCount: Int, options: EncodeOptions) throws(EncodeError) -> any AnimationSink
}

/// Who decodes and encodes animations, by format; nil when a format has none.
public protocol AnimationCodecProviding {
    func animationDecoder(for format: ImageFormat) -> (any AnimationDecoding)?
    func animationEncoder(for format: ImageFormat) -> (any AnimationEncoding)?
}
