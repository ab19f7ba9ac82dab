import CAvif
import KilnModel

/// Reads animated AVIF (AV1 image sequences, `avis`) frame by frame with libavif
/// (`avifDecoderNextImage`, dav1d on one thread): each frame is a full canvas (AV1 sequences
/// have no disposal or offsets), converted to RGB(A) like a still, with its duration from the
/// track's timing. libavif 0.11 reads no repetition count, so the loop count is 0 (forever), as
/// browsers play a sequence.
///
/// The structure (`readAnimation`) comes from the parse alone: canvas, frame count, alpha; the
/// same limits as a still (`AVIFDecoder`) hold for every frame, and the pipeline's animation
/// limits (`limits.max_animation_frames`, `limits.max_animation_pixels`) for all of them.
public struct AVIFAnimationDecoder: AnimationDecoding, Sendable {
    public init() {}

    public func readAnimation(_ data: [UInt8]) throws(DecodeError) -> AnimationInfo {
        try AVIFDecoder().withParsed(data, limits: nil) { _, header, extras throws(DecodeError) in
            let pixels = header.width * header.height
            return AnimationInfo(canvas: header.size, frameCount: header.frameCount, loopCount: 0, hasAlpha: header.hasAlpha,
                                 storedPixels: pixels.multipliedReportingOverflow(by: header.frameCount).partialValue,
                                 iccProfile: extras.icc)
        }
    }

    public func decodeFrames(_ data: [UInt8], _ body: (AnimationFrame) throws -> Bool) throws {
        guard let lib = AVIFLibrary.functions else { throw DecodeError.unsupported(AVIFLibrary.missing) }
        var failure: (any Error)?
        try AVIFDecoder().withParsed(data, limits: DecodeLimits(maxPixels: Int.max / 4)) { decoder, header, _ throws(DecodeError) in
            for index in 0..<header.frameCount {
                let next = lib.avifDecoderNextImage(decoder)
                guard next == AVIF_RESULT_OK, let image = decoder.pointee.image else {
                    throw .corrupt("AVIF frame \(index) failed: \(AVIFEncoder.describe(next))")
                }
                let buffer = try AVIFDecoder.rgb(of: image, header: header, lib: lib)
                let milliseconds = Int((decoder.pointee.imageTiming.duration * 1000).rounded())
                do {
                    guard try body(AnimationFrame(index: index, buffer: buffer, durationMilliseconds: max(0, milliseconds))) else { return }
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }
}
