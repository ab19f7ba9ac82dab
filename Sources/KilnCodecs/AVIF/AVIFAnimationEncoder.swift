import CAvif
import KilnModel

/// Writes animated AVIF (an AV1 image sequence, `avis`) with libavif's `avifEncoderAddImage`:
/// each frame converted as a still is (`AVIFEncoder.makeImage`: 8-bit 4:2:0, sRGB), encoded by
/// aom at the still's speed and quantizer on one thread, with its duration on a millisecond
/// timescale. libavif 0.11 writes no repetition count: players loop a sequence forever.
///
/// Only for `f:avif`: `f:auto` gives animations WebP, which encodes far faster (an AV1 sequence
/// costs about an AV1 still per frame; the cost planner prices it so, per frame).
public struct AVIFAnimationEncoder: AnimationEncoding, Sendable {
    public init() {}

    public func begin(size: PixelSize, loopCount: Int, options: EncodeOptions) throws(EncodeError) -> any AnimationSink {
        guard let lib = AVIFLibrary.functions else { throw .failed(AVIFLibrary.missing) }
        let encoder = try AVIFEncoder.makeEncoder(options: options, lib: lib)
        encoder.pointee.timescale = 1000
        return AVIFAnimationSink(lib: lib, encoder: encoder, size: size, options: options)
    }
}

/// The frames of one animated AVIF, handed to libavif as they come.
final class AVIFAnimationSink: AnimationSink {
    let lib: kiln_avif_api
    let encoder: UnsafeMutablePointer<avifEncoder>
    let size: PixelSize
    let options: EncodeOptions
    var frames = 0

    init(lib: kiln_avif_api, encoder: UnsafeMutablePointer<avifEncoder>, size: PixelSize, options: EncodeOptions) {
        self.lib = lib
        self.encoder = encoder
        self.size = size
        self.options = options
    }

    deinit { lib.avifEncoderDestroy(encoder) }

    func add(_ frame: PixelBuffer, durationMilliseconds: Int) throws(EncodeError) {
        guard frame.size == size else { throw .failed("AVIF frame of another size") }
        let image = try AVIFEncoder.makeImage(frame, options: options, lib: lib)
        defer { lib.avifImageDestroy(image) }
        // A zero duration would make the frame vanish: browsers show GIF's 0 as 100 ms; 10 ms here.
        let added = lib.avifEncoderAddImage(encoder, image, UInt64(max(durationMilliseconds, 10)), avifAddImageFlags(0))
        guard added == AVIF_RESULT_OK else { throw .failed("AVIF frame \(frames) failed: \(AVIFEncoder.describe(added))") }
        frames += 1
    }

    func finish() throws(EncodeError) -> [UInt8] {
        var output = avifRWData()
        defer { lib.avifRWDataFree(&output) }
        let finished = lib.avifEncoderFinish(encoder, &output)
        guard finished == AVIF_RESULT_OK, let data = output.data, output.size > 0 else {
            throw .failed("AVIF sequence failed: \(AVIFEncoder.describe(finished))")
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }
}
