import CTurboJPEG
import KilnModel

/// Encodes JPEG with TurboJPEG (`tjCompress2`): `options.chromaSubsampling` (4:2:0 by default),
/// `options.quality`, progressive when `options.progressive`.
///
/// RGBA input is encoded as RGBX: the alpha byte is ignored (the pipeline flattens onto the
/// background before choosing a format without alpha). `options.iccProfile`, when it is an RGB
/// profile, is written as APP2 "ICC_PROFILE" segments after the JFIF header (TurboJPEG 2.1 cannot
/// embed one itself); other profiles (the CMYK profile of a converted CMYK JPEG) are left out.
/// `options.metadata` becomes APP1 "Exif" and APP1 XMP segments before the profile (`JPEGMetadata`).
public struct JPEGEncoder: ImageEncoding, Sendable {
    public init() {}

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        guard image.channels == 3 || image.channels == 4, image.width > 0, image.height > 0,
              image.pixels.count == image.width * image.height * image.channels else {
            throw .failed("JPEG encoder needs a non-empty RGB or RGBA buffer")
        }
        guard let handle = TurboJPEGHandle.compressor() else { throw .failed("TurboJPEG could not create a compressor") }
        let pixelFormat = image.channels == 4 ? TJPF_RGBX : TJPF_RGB
        let quality = Int32(min(max(options.quality, 1), 100))
        let flags = options.progressive ? TJFLAG_PROGRESSIVE : 0
        let subsampling = switch options.chromaSubsampling {
        case .s444: TJSAMP_444
        case .s422: TJSAMP_422
        case .s420: TJSAMP_420
        }

        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let rc = image.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(handle.raw, pixels.baseAddress, Int32(image.width), Int32(image.rowBytes), Int32(image.height),
                        pixelFormat.rawValue, &output, &size, Int32(subsampling.rawValue), quality, flags)
        }
        defer { if let output { tjFree(output) } }
        guard rc == 0, let output, size > 0 else { throw .failed("JPEG encode failed: \(handle.errorMessage)") }
        let jpeg = Array(UnsafeBufferPointer(start: output, count: Int(size)))
        // After SOI and JFIF APP0: APP1 EXIF, APP1 XMP, then the APP2 profile segments, where
        // libjpeg's `jpeg_write_marker` / `jpeg_write_icc_profile` put them.
        var segments = options.metadata.map(JPEGMetadata.segments) ?? []
        if let profile = options.iccProfile, ICCProfile.isRGB(profile) {
            segments += ICCProfile.jpegSegments(profile) ?? []
        }
        return JPEGMetadata.inserting(segments, into: jpeg)
    }
}
