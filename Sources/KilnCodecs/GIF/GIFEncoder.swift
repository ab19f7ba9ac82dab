import KilnModel

/// Writes GIF (`f:gif`), still and animated, through `GIFWriter` (giflib) and `GIFQuantizer`
/// (median cut to at most 256 colours per frame, each pixel its nearest colour).
///
/// - Alpha: GIF has one transparent index; pixels with alpha below 128 take it, the rest are
///   opaque (no partial transparency).
/// - Animation: every frame is a full canvas with a local colour table of its own, disposal
///   "none", its duration in centiseconds (rounded) and the loop count of the source.
/// - No quality (`q:` changes nothing), no metadata, no colour profile; `f:auto` never picks GIF.
public struct GIFEncoder: ImageEncoding, AnimationEncoding, Sendable {
    public init() {}

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        let writer = try GIFWriter(size: image.size, loopCount: nil)
        try writer.add(image, durationMilliseconds: 0)
        return try writer.finish()
    }

    public func begin(size: PixelSize, loopCount: Int, options: EncodeOptions) throws(EncodeError) -> any AnimationSink {
        GIFAnimationSink(writer: try GIFWriter(size: size, loopCount: loopCount))
    }
}

/// The frames of one animated GIF, written as they come.
final class GIFAnimationSink: AnimationSink {
    let writer: GIFWriter

    init(writer: GIFWriter) {
        self.writer = writer
    }

    func add(_ frame: PixelBuffer, durationMilliseconds: Int) throws(EncodeError) {
        try writer.add(frame, durationMilliseconds: durationMilliseconds)
    }

    func finish() throws(EncodeError) -> [UInt8] {
        try writer.finish()
    }
}
