import CWebP
import KilnModel

/// Decodes animated WebP frame by frame with libwebpdemux's `WebPAnimDecoder`, which composites
/// each frame onto its canvas (blending and disposal) and keeps only that canvas: memory is one
/// canvas (libwebp's) plus the frame handed out, whatever the frame count.
///
/// The container is parsed first (`WebPContainer`, which needs the whole file): a truncated
/// animation is refused before any frame is decoded.
public struct WebPAnimationDecoder: AnimationDecoding, Sendable {
    public init() {}

    public func readAnimation(_ data: [UInt8]) throws(DecodeError) -> AnimationInfo {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> AnimationInfo in try Self.info(bytes) }
        }.get()
    }

    private static func info(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> AnimationInfo {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .corrupt("empty WebP data") }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw .corrupt("WebP header: \(WebPDecoder.describe(status))") }
        guard let container = WebPContainer(bytes) else {
            throw .corrupt("WebP container is truncated or malformed (demux failed)")
        }
        let canvas = features.has_animation != 0
            ? PixelSize(width: container.canvasWidth, height: container.canvasHeight)
            : PixelSize(width: Int(features.width), height: Int(features.height))
        return AnimationInfo(canvas: canvas, frameCount: max(container.frameCount, 1), loopCount: container.loopCount,
                             hasAlpha: features.has_alpha != 0,
                             storedPixels: canvas.width * canvas.height * max(container.frameCount, 1),
                             iccProfile: container.iccProfile)
    }

    public func decodeFrames(_ data: [UInt8], _ body: (AnimationFrame) throws -> Bool) throws {
        try data.withUnsafeBytes { bytes in
            let info = try Self.info(bytes)
            var options = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&options) != 0 else { throw DecodeError.corrupt("libwebp version mismatch") }
            options.color_mode = MODE_RGBA
            options.use_threads = 0
            var webp = WebPData(bytes: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let decoder = WebPAnimDecoderNew(&webp, &options) else {
                throw DecodeError.corrupt("WebP animation could not be opened (WebPAnimDecoderNew failed)")
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var animInfo = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &animInfo) != 0,
                  Int(animInfo.canvas_width) == info.canvas.width, Int(animInfo.canvas_height) == info.canvas.height else {
                throw DecodeError.corrupt("WebP animation canvas does not match its header")
            }
            let count = info.canvas.width * info.canvas.height
            var previous: Int32 = 0
            var index = 0
            while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var pixels: UnsafeMutablePointer<UInt8>? = nil
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &pixels, &timestamp) != 0, let pixels else {
                    throw DecodeError.corrupt("WebP animation: frame \(index) could not be decoded")
                }
                let buffer: PixelBuffer
                if info.hasAlpha {
                    buffer = PixelBuffer(width: info.canvas.width, height: info.canvas.height, channels: 4,
                                         pixels: Array(UnsafeBufferPointer(start: pixels, count: count * 4)))
                } else {
                    let rgb = [UInt8](unsafeUninitializedCapacity: count * 3) { out, initialized in
                        for i in 0..<count {
                            out[i * 3] = pixels[i * 4]
                            out[i * 3 + 1] = pixels[i * 4 + 1]
                            out[i * 3 + 2] = pixels[i * 4 + 2]
                        }
                        initialized = count * 3
                    }
                    buffer = PixelBuffer(width: info.canvas.width, height: info.canvas.height, channels: 3, pixels: rgb)
                }
                let frame = AnimationFrame(index: index, buffer: buffer,
                                           durationMilliseconds: Int(max(timestamp - previous, 0)))
                previous = timestamp
                index += 1
                guard try body(frame) else { return }
            }
        }
    }
}
