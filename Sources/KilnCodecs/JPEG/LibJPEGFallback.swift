import CKilnCodecShims
import KilnModel

/// libjpeg's own API for the JPEGs TurboJPEG's v2 API refuses while libjpeg decodes them: colour
/// files whose sampling factors TurboJPEG cannot classify (3x2, 4x2, 1x4, a different factor per
/// component...), which `tjDecompressHeader3` rejects with "Could not determine subsampling type".
/// Same policy as the TurboJPEG path (`kiln_jpeg.h`): every warning is an error and more than 500
/// scans is refused; DCT scaling (M/8) shrinks on load the same way.
enum LibJPEGFallback {
    /// TurboJPEG's message for the files this decodes.
    static func applies(to turboMessage: String) -> Bool {
        turboMessage.contains("Could not determine subsampling type")
    }

    struct Info {
        var width: Int, height: Int
        var isCMYK: Bool
    }

    static func header(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Info {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .corrupt("empty JPEG data") }
        var info = kiln_jpeg_info()
        var message = [CChar](repeating: 0, count: 200)
        guard kiln_jpeg_header(base.assumingMemoryBound(to: UInt8.self), bytes.count, &info, &message, message.count) == 0 else {
            throw error(message)
        }
        return Info(width: Int(info.width), height: Int(info.height), isCMYK: info.cmyk != 0)
    }

    /// Pixels at `factor` (a reducing factor of `TurboJPEGHandle`, denominator dividing 8): RGB, or
    /// CMYK as stored for CMYK files.
    static func decode(_ bytes: UnsafeRawBufferPointer, info: Info,
                       factor: (num: Int, denom: Int)) throws(DecodeError) -> (pixels: [UInt8], width: Int, height: Int) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .corrupt("empty JPEG data") }
        let eighths = factor.num * (8 / factor.denom)
        let width = TurboJPEGHandle.scaled(info.width, factor)
        let height = TurboJPEGHandle.scaled(info.height, factor)
        let channels = info.isCMYK ? 4 : 3
        var message = [CChar](repeating: 0, count: 200)
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        var failed = false
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { buffer, initialized in
            let rc = kiln_jpeg_decode(base.assumingMemoryBound(to: UInt8.self), bytes.count, Int32(eighths),
                                      buffer.baseAddress, buffer.count, &outWidth, &outHeight, &message, message.count)
            failed = rc != 0
            initialized = failed ? 0 : buffer.count
        }
        guard !failed else { throw error(message) }
        return (pixels, Int(outWidth), Int(outHeight))
    }

    private static func error(_ message: [CChar]) -> DecodeError {
        let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("Unsupported JPEG data precision") || text.hasPrefix("Unsupported JPEG process") {
            return .unsupported(text)
        }
        return .corrupt(text.isEmpty ? "libjpeg could not read the image" : text)
    }
}
