import CWebP
import KilnModel

/// Decodes WebP with libwebp: still images with the advanced API, animations to their first frame.
///
/// - Header: `WebPGetFeatures`; extended (VP8X) files also go through the demuxer for the canvas
///   size and frame count of animations, the EXIF orientation, the ICC profile, EXIF and XMP. An animation's
///   canvas × frames is checked against `maxAnimationPixels` before anything is decoded, and a
///   truncated animation is refused at the header.
/// - Shrink-on-load for opaque still images: libwebp's scaled decoding by 1/2, 1/4 or 1/8 (the
///   smallest that still covers `DecodeOptions.minimumSize`); the header keeps the full size.
///   Images with alpha decode at full size: libwebp 1.2's RGB rescaler averages lossy colour
///   without weighting it by alpha, which bleeds the colour of transparent pixels into edges.
///   Measured (release, CPU time) on the 1920×1080 bench WebP: full 37.5 ms, 1/2 51.5 ms — scaled
///   decoding costs more CPU than it saves inside libwebp and pays off only through the smaller
///   buffer the resampler then reads; `scalesOnLoad: false` turns it off.
/// - Output is RGBA when the file has alpha, else RGB; animations give the first frame composited
///   onto the canvas (`WebPAnimDecoder`).
public struct WebPDecoder: ImageDecoding, Sendable {
    /// Whether opaque still images are decoded scaled when `DecodeOptions.minimumSize` allows it.
    public var scalesOnLoad: Bool

    public init(scalesOnLoad: Bool = true) {
        self.scalesOnLoad = scalesOnLoad
    }

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> ImageHeader in try Self.parse(bytes).header }
        }.get()
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> DecodedImage in
                try Self.decode(bytes, options: options, scalesOnLoad: scalesOnLoad)
            }
        }.get()
    }

    // MARK: - Header

    private struct Parsed {
        var header: ImageHeader
        var isAnimated: Bool
        var container: WebPContainer?
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Parsed {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .corrupt("empty WebP data") }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        guard status == VP8_STATUS_OK else { throw .corrupt("WebP header: \(describe(status))") }
        var header = ImageHeader(format: .webp, width: Int(features.width), height: Int(features.height),
                                 frameCount: 1, orientation: 1, hasAlpha: features.has_alpha != 0)
        var container: WebPContainer?
        // Only the extended format (VP8X) can carry ICCP; its flags byte says whether it does.
        header.hasColourProfile = WebPContainer.isExtended(bytes) && bytes.count > 20 && bytes[20] & 0x20 != 0
        if features.has_animation != 0 || WebPContainer.isExtended(bytes) {
            guard let parsed = WebPContainer(bytes) else {
                throw .corrupt("WebP container is truncated or malformed (demux failed)")
            }
            if features.has_animation != 0 {
                header.width = parsed.canvasWidth
                header.height = parsed.canvasHeight
                header.frameCount = max(parsed.frameCount, 1)
            }
            header.orientation = parsed.orientation
            container = parsed
        }
        return Parsed(header: header, isAnimated: features.has_animation != 0, container: container)
    }

    // MARK: - Decode

    private static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions,
                               scalesOnLoad: Bool) throws(DecodeError) -> DecodedImage {
        let parsed = try parse(bytes)
        let header = parsed.header
        try options.limits.check(header)
        let buffer = parsed.isAnimated
            ? try decodeFirstFrame(bytes, header: header)
            : try decodeStill(bytes, header: header, minimumSize: scalesOnLoad ? options.minimumSize : nil)
        return DecodedImage(buffer: buffer, header: header, iccProfile: parsed.container?.iccProfile,
                            metadata: parsed.container?.metadata)
    }

    /// The scaled size: the smallest of 1/1, 1/2, 1/4, 1/8 (rounded up) that still covers `minimum`.
    static func scaledSize(_ size: PixelSize, minimum: PixelSize?) -> PixelSize {
        guard let minimum else { return size }
        var best = size
        for denominator in [2, 4, 8] {
            let candidate = PixelSize(width: (size.width + denominator - 1) / denominator,
                                      height: (size.height + denominator - 1) / denominator)
            guard candidate.width >= minimum.width, candidate.height >= minimum.height else { break }
            best = candidate
        }
        return best
    }

    private static func decodeStill(_ bytes: UnsafeRawBufferPointer, header: ImageHeader,
                                    minimumSize: PixelSize?) throws(DecodeError) -> PixelBuffer {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else { throw .corrupt("libwebp version mismatch") }
        let size = header.hasAlpha ? header.size : scaledSize(header.size, minimum: minimumSize)
        if size != header.size {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(size.width)
            config.options.scaled_height = Int32(size.height)
        }
        let channels = header.hasAlpha ? 4 : 3
        let rowBytes = size.width * channels
        var status = VP8_STATUS_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * size.height) { buffer, initialized in
            config.output.colorspace = header.hasAlpha ? MODE_RGBA : MODE_RGB
            config.output.is_external_memory = 1
            config.output.u.RGBA = WebPRGBABuffer(rgba: buffer.baseAddress, stride: Int32(rowBytes), size: buffer.count)
            status = WebPDecode(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, &config)
            WebPFreeDecBuffer(&config.output)
            initialized = status == VP8_STATUS_OK ? rowBytes * size.height : 0
        }
        guard status == VP8_STATUS_OK else { throw .corrupt("WebP decode failed: \(describe(status))") }
        return PixelBuffer(width: size.width, height: size.height, channels: channels, pixels: pixels)
    }

    /// The first frame of an animation, composited onto the canvas as `WebPAnimDecoder` does.
    private static func decodeFirstFrame(_ bytes: UnsafeRawBufferPointer, header: ImageHeader) throws(DecodeError) -> PixelBuffer {
        var animOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else { throw .corrupt("libwebp version mismatch") }
        animOptions.color_mode = MODE_RGBA
        animOptions.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&data, &animOptions) else {
            throw .corrupt("WebP animation could not be opened (WebPAnimDecoderNew failed)")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0,
              Int(info.canvas_width) == header.width, Int(info.canvas_height) == header.height else {
            throw .corrupt("WebP animation canvas does not match its header")
        }
        var frame: UnsafeMutablePointer<UInt8>? = nil
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
            throw .corrupt("WebP animation: the first frame could not be decoded")
        }
        let pixelCount = header.width * header.height
        if header.hasAlpha {
            return PixelBuffer(width: header.width, height: header.height, channels: 4,
                               pixels: Array(UnsafeBufferPointer(start: frame, count: pixelCount * 4)))
        }
        let rgb = [UInt8](unsafeUninitializedCapacity: pixelCount * 3) { buffer, initialized in
            guard let dst = buffer.baseAddress else { return }
            for index in 0..<pixelCount {
                dst[index * 3] = frame[index * 4]
                dst[index * 3 + 1] = frame[index * 4 + 1]
                dst[index * 3 + 2] = frame[index * 4 + 2]
            }
            initialized = pixelCount * 3
        }
        return PixelBuffer(width: header.width, height: header.height, channels: 3, pixels: rgb)
    }

    static func describe(_ status: VP8StatusCode) -> String {
        switch status {
        case VP8_STATUS_OK: "ok"
        case VP8_STATUS_OUT_OF_MEMORY: "out of memory"
        case VP8_STATUS_INVALID_PARAM: "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: "unsupported feature"
        case VP8_STATUS_SUSPENDED: "suspended"
        case VP8_STATUS_USER_ABORT: "aborted"
        case VP8_STATUS_NOT_ENOUGH_DATA: "not enough data (truncated)"
        default: "status \(status.rawValue)"
        }
    }
}
