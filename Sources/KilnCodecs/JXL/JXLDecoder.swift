import CJxl
import KilnModel

/// Decodes JPEG XL with libjxl 0.7 (loaded on first use: CJxl), one thread (no parallel runner),
/// metadata boxes neither subscribed to nor decompressed.
///
/// - Header: `JxlDecoderProcessInput` up to `JXL_DEC_BASIC_INFO` (size, alpha, animation,
///   orientation) and `JXL_DEC_COLOR_ENCODING`; no pixels are decoded. In `decode` the size is
///   checked against the limits as soon as the basic info is known, before libjxl is given an
///   output buffer or decodes a frame.
/// - Orientation: reported in the header; pixels come out as stored (`JxlDecoderSetKeepOrientation`).
/// - Animation: the first (coalesced) frame only; the header says one frame.
/// - Colour: the profile of the decoded pixels (`JXL_COLOR_PROFILE_TARGET_DATA`): nil when it is
///   sRGB, else its ICC bytes (libjxl synthesises them for an encoded colour space).
/// - libjxl writes every failure to stderr; CJxl points libjxl's own `stderr` at a sink when it
///   loads it (`kiln_jxl_is_quiet`), so a hostile file cannot fill the logs.
/// - Output: 8-bit RGB, or RGBA unpremultiplied (`JxlDecoderSetUnpremultiplyAlpha`) when the image
///   has alpha; grey images are expanded to RGB by libjxl. A truncated file or any libjxl error is `.corrupt`.
public struct JXLDecoder: ImageDecoding, Sendable {
    static let missing = "JPEG XL needs libjxl (libjxl0.7), which is not installed"

    public init() {}

    /// Whether libjxl's messages go to the sink (false when libjxl is missing or on other platforms).
    static var isQuiet: Bool { kiln_jxl_is_quiet() != 0 }

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try Self.run(data, limits: nil).header
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        let result = try Self.run(data, limits: options.limits)
        guard let buffer = result.buffer else { throw .corrupt("JPEG XL has no image") }
        return DecodedImage(buffer: buffer, header: result.header, iccProfile: result.icc)
    }

    struct Outcome {
        var header: ImageHeader
        var icc: [UInt8]?
        var buffer: PixelBuffer?
    }

    /// Reads the header and colour encoding; with `limits`, checks them and decodes the first frame.
    static func run(_ data: [UInt8], limits: DecodeLimits?) throws(DecodeError) -> Outcome {
        guard let lib = kiln_jxl_library()?.pointee else { throw .unsupported(missing) }
        guard !data.isEmpty else { throw .corrupt("JPEG XL is truncated") }
        guard let decoder = lib.JxlDecoderCreate(nil) else { throw .corrupt("JPEG XL decoder could not be created (out of memory)") }
        defer { lib.JxlDecoderDestroy(decoder) }
        var events = JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue
        if limits != nil { events |= JXL_DEC_FULL_IMAGE.rawValue }
        guard lib.JxlDecoderSubscribeEvents(decoder, Int32(events)) == JXL_DEC_SUCCESS,
              lib.JxlDecoderSetKeepOrientation(decoder, JXL_TRUE) == JXL_DEC_SUCCESS,
              lib.JxlDecoderSetDecompressBoxes(decoder, JXL_FALSE) == JXL_DEC_SUCCESS,
              lib.JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE) == JXL_DEC_SUCCESS
        else { throw .corrupt("JPEG XL decoder could not be set up") }
        return try data.withUnsafeBufferPointer { bytes in
            Result { () throws(DecodeError) -> Outcome in
                guard lib.JxlDecoderSetInput(decoder, bytes.baseAddress, bytes.count) == JXL_DEC_SUCCESS else {
                    throw .corrupt("JPEG XL input was refused")
                }
                lib.JxlDecoderCloseInput(decoder)
                var result = Outcome(header: ImageHeader(format: .jxl, width: 0, height: 0))
                while true {
                    let status = lib.JxlDecoderProcessInput(decoder)
                    switch status {
                    case JXL_DEC_BASIC_INFO:
                        var info = JxlBasicInfo()
                        guard lib.JxlDecoderGetBasicInfo(decoder, &info) == JXL_DEC_SUCCESS else { throw .corrupt("JPEG XL basic info is unreadable") }
                        let orientation = Int(info.orientation.rawValue)
                        result.header = ImageHeader(format: .jxl, width: Int(info.xsize), height: Int(info.ysize), frameCount: 1,
                                                    orientation: (1...8).contains(orientation) ? orientation : 1, hasAlpha: info.alpha_bits > 0)
                        if let limits { try limits.check(result.header) }
                    case JXL_DEC_COLOR_ENCODING:
                        result.icc = colourProfile(lib, decoder)
                        result.header.hasColourProfile = result.icc != nil
                        if limits == nil { return result }
                    case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                        result.buffer = try frame(lib, decoder, header: result.header)
                        return result
                    case JXL_DEC_NEED_MORE_INPUT:
                        throw .corrupt("JPEG XL is truncated")
                    case JXL_DEC_SUCCESS:
                        throw .corrupt("JPEG XL has no image")
                    case JXL_DEC_ERROR:
                        throw .corrupt("JPEG XL is corrupt or truncated")
                    default:
                        continue
                    }
                }
            }
        }.get()
    }

    /// Gives libjxl the output buffer and runs it to the end of the first frame.
    private static func frame(_ lib: kiln_jxl_api, _ decoder: OpaquePointer, header: ImageHeader) throws(DecodeError) -> PixelBuffer {
        let channels = header.hasAlpha ? 4 : 3
        var format = JxlPixelFormat(num_channels: UInt32(channels), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        var size = 0
        guard lib.JxlDecoderImageOutBufferSize(decoder, &format, &size) == JXL_DEC_SUCCESS,
              size == header.width * header.height * channels
        else { throw .corrupt("JPEG XL output buffer size is inconsistent") }
        var failure: DecodeError?
        let pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            initialized = 0
            guard lib.JxlDecoderSetImageOutBuffer(decoder, &format, buffer.baseAddress, size) == JXL_DEC_SUCCESS else {
                failure = .corrupt("JPEG XL output buffer was refused")
                return
            }
            while true {
                switch lib.JxlDecoderProcessInput(decoder) {
                case JXL_DEC_FULL_IMAGE:
                    initialized = size
                    return
                case JXL_DEC_NEED_MORE_INPUT:
                    failure = .corrupt("JPEG XL is truncated")
                    return
                case JXL_DEC_ERROR, JXL_DEC_SUCCESS:
                    failure = .corrupt("JPEG XL is corrupt or truncated")
                    return
                default:
                    continue
                }
            }
        }
        if let failure { throw failure }
        return PixelBuffer(width: header.width, height: header.height, channels: channels, pixels: pixels)
    }

    /// nil for sRGB (or grey with sRGB's transfer), else the ICC profile of the decoded pixels.
    private static func colourProfile(_ lib: kiln_jxl_api, _ decoder: OpaquePointer) -> [UInt8]? {
        var encoding = JxlColorEncoding()
        if lib.JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
           encoding.white_point == JXL_WHITE_POINT_D65, encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB,
           encoding.color_space == JXL_COLOR_SPACE_GRAY
            || (encoding.color_space == JXL_COLOR_SPACE_RGB && encoding.primaries == JXL_PRIMARIES_SRGB) {
            return nil
        }
        var size = 0
        guard lib.JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
              size > 0, size <= 1 << 24 else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        let status = profile.withUnsafeMutableBufferPointer {
            lib.JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, $0.baseAddress, size)
        }
        return status == JXL_DEC_SUCCESS ? profile : nil
    }
}
