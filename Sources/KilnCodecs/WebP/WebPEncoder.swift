import CWebP
import KilnModel

/// Encodes WebP with libwebp's advanced API (`WebPConfig`, `WebPPicture`, `WebPMemoryWriter`).
///
/// Lossy at `options.quality` unless `options.lossless`; `options.webpMethod` is libwebp's speed /
/// size trade-off (0 fast ... 6 small). RGBA input keeps its alpha. `options.iccProfile`, when it is
/// an RGB profile, is added as an ICCP chunk and `options.metadata` as EXIF and "XMP " chunks with
/// libwebp's muxer, which also writes the VP8X header and its flags.
public struct WebPEncoder: ImageEncoding, Sendable {
    public init() {}

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        guard image.channels == 3 || image.channels == 4, image.width > 0, image.height > 0,
              image.width <= Int(WEBP_MAX_DIMENSION), image.height <= Int(WEBP_MAX_DIMENSION),
              image.pixels.count == image.width * image.height * image.channels else {
            throw .failed("WebP encoder needs a non-empty RGB or RGBA buffer of at most 16383 pixels a side")
        }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw .failed("libwebp version mismatch") }
        config.quality = Float(min(max(options.quality, 0), 100))
        config.method = Int32(min(max(options.webpMethod, 0), 6))
        config.lossless = options.lossless ? 1 : 0
        guard WebPValidateConfig(&config) != 0 else { throw .failed("invalid WebP configuration") }

        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw .failed("libwebp version mismatch") }
        picture.width = Int32(image.width)
        picture.height = Int32(image.height)
        picture.use_argb = options.lossless ? 1 : 0
        defer { WebPPictureFree(&picture) }
        let imported = image.pixels.withUnsafeBufferPointer { pixels in
            image.channels == 4
                ? WebPPictureImportRGBA(&picture, pixels.baseAddress, Int32(image.rowBytes))
                : WebPPictureImportRGB(&picture, pixels.baseAddress, Int32(image.rowBytes))
        }
        guard imported != 0 else { throw .failed("WebP encode failed: could not import pixels (out of memory)") }

        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0, let memory = writer.mem, writer.size > 0 else {
            throw .failed("WebP encode failed: error \(picture.error_code.rawValue)")
        }
        let bitstream = UnsafeBufferPointer(start: memory, count: writer.size)
        var chunks: [(fourCC: String, payload: [UInt8])] = []
        if let profile = options.iccProfile, ICCProfile.isRGB(profile) { chunks.append(("ICCP", profile)) }
        if let exif = options.metadata?.exif, !exif.isEmpty { chunks.append(("EXIF", exif)) }
        if let xmp = options.metadata?.xmp, !xmp.isEmpty { chunks.append(("XMP ", xmp)) }
        return chunks.isEmpty ? Array(bitstream) : try Self.adding(chunks, to: bitstream)
    }

    /// Rewrites a simple WebP file as an extended one with the given metadata chunks.
    private static func adding(_ chunks: [(fourCC: String, payload: [UInt8])],
                               to bitstream: UnsafeBufferPointer<UInt8>) throws(EncodeError) -> [UInt8] {
        guard let mux = WebPMuxNew() else { throw .failed("WebP muxer could not be created") }
        defer { WebPMuxDelete(mux) }
        var image = WebPData(bytes: bitstream.baseAddress, size: bitstream.count)
        guard WebPMuxSetImage(mux, &image, 1) == WEBP_MUX_OK else { throw .failed("WebP muxer refused the image") }
        for (fourCC, payload) in chunks {
            let status = payload.withUnsafeBufferPointer { bytes in
                var chunk = WebPData(bytes: bytes.baseAddress, size: bytes.count)
                return WebPMuxSetChunk(mux, fourCC, &chunk, 1)   // copied: the bytes need not outlive the call
            }
            guard status == WEBP_MUX_OK else { throw .failed("WebP muxer refused the \(fourCC) chunk") }
        }
        var assembled = WebPData()
        guard WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK, let bytes = assembled.bytes else {
            throw .failed("WebP muxer could not assemble the file")
        }
        defer { WebPDataClear(&assembled) }
        return Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
    }
}
