import CWebP
import KilnModel

/// Encodes animated WebP with libwebpmux's `WebPAnimEncoder`: frames are added one at a time
/// (each is encoded when added and only its bitstream is kept), with the loop count and each
/// frame's duration. Lossy at `options.quality` unless `options.lossless`; `options.webpMethod`
/// as for stills. No metadata chunks. libwebp merges a frame identical to the one before it into
/// that frame (its duration grows): the frame count may drop, the timing does not change.
public struct WebPAnimationEncoder: AnimationEncoding, Sendable {
    public init() {}

    public func begin(size: PixelSize, loopCount: Int, options: EncodeOptions) throws(EncodeError) -> any AnimationSink {
        try WebPAnimationSink(size: size, loopCount: loopCount, options: options)
    }
}

final class WebPAnimationSink: AnimationSink {
    private let encoder: OpaquePointer
    private var config = WebPConfig()
    private let size: PixelSize
    private var timestamp = 0
    private var frames = 0

    init(size: PixelSize, loopCount: Int, options: EncodeOptions) throws(EncodeError) {
        guard size.width > 0, size.height > 0, size.width <= Int(WEBP_MAX_DIMENSION), size.height <= Int(WEBP_MAX_DIMENSION) else {
            throw .failed("WebP animation needs frames of 1 to 16383 pixels a side")
        }
        var animOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&animOptions) != 0, WebPConfigInit(&config) != 0 else {
            throw .failed("libwebp version mismatch")
        }
        animOptions.anim_params.loop_count = Int32(min(max(loopCount, 0), 65_535))
        animOptions.anim_params.bgcolor = 0x0000_0000
        config.quality = Float(min(max(options.quality, 0), 100))
        config.method = Int32(min(max(options.webpMethod, 0), 6))
        config.lossless = options.lossless ? 1 : 0
        guard WebPValidateConfig(&config) != 0 else { throw .failed("invalid WebP configuration") }
        guard let encoder = WebPAnimEncoderNew(Int32(size.width), Int32(size.height), &animOptions) else {
            throw .failed("WebP animation encoder could not be created (out of memory)")
        }
        self.encoder = encoder
        self.size = size
    }

    deinit { WebPAnimEncoderDelete(encoder) }

    func add(_ frame: PixelBuffer, durationMilliseconds: Int) throws(EncodeError) {
        guard frame.size == size, frame.channels == 3 || frame.channels == 4,
              frame.pixels.count == frame.width * frame.height * frame.channels else {
            throw .failed("WebP animation frame \(frames) is \(frame.width)x\(frame.height), not \(size.width)x\(size.height)")
        }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw .failed("libwebp version mismatch") }
        picture.width = Int32(size.width)
        picture.height = Int32(size.height)
        picture.use_argb = 1
        defer { WebPPictureFree(&picture) }
        let imported = frame.pixels.withUnsafeBufferPointer { pixels in
            frame.channels == 4
                ? WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(frame.rowBytes))
                : WebPPictureImportRGB(&picture, pixels.baseAddress, Int32(frame.rowBytes))
        }
        guard imported != 0 else { throw .failed("WebP animation: could not import frame \(frames) (out of memory)") }
        guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: timestamp), &config) != 0 else {
            throw .failed("WebP animation: frame \(frames) was refused: \(Self.error(encoder))")
        }
        timestamp += max(durationMilliseconds, 0)
        frames += 1
    }

    func finish() throws(EncodeError) -> [UInt8] {
        guard frames > 0 else { throw .failed("WebP animation without frames") }
        // The end timestamp gives the last frame its duration.
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: timestamp), nil) != 0 else {
            throw .failed("WebP animation could not be closed: \(Self.error(encoder))")
        }
        var data = WebPData()
        guard WebPAnimEncoderAssemble(encoder, &data) != 0, let bytes = data.bytes, data.size > 0 else {
            throw .failed("WebP animation could not be assembled: \(Self.error(encoder))")
        }
        defer { WebPDataClear(&data) }
        return Array(UnsafeBufferPointer(start: bytes, count: data.size))
    }

    private static func error(_ encoder: OpaquePointer) -> String {
        guard let text = WebPAnimEncoderGetError(encoder) else { return "unknown error" }
        return String(cString: text)
    }
}
