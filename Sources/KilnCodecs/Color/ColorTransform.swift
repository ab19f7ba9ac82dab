import CLcms2

/// How pixels handed to a colour conversion are laid out, 8 bits per sample, tightly packed.
enum ColorLayout: Hashable, Sendable {
    case rgb
    /// RGB with a trailing alpha byte, which is copied unchanged (`cmsFLAGS_COPY_ALPHA`).
    case rgba
    /// CMYK as in JPEG; `inverted` when 255 means no ink (Adobe APP14 files, `TYPE_CMYK_8_REV`).
    case cmyk(inverted: Bool)

    var bytesPerPixel: Int {
        switch self {
        case .rgb: 3
        case .rgba, .cmyk: 4
        }
    }

    /// The lcms2 input format of this layout.
    var lcmsInput: cmsUInt32Number {
        switch self {
        case .rgb: KILN_TYPE_RGB_8
        case .rgba: KILN_TYPE_RGBA_8
        case .cmyk(let inverted): inverted ? KILN_TYPE_CMYK_8_REV : KILN_TYPE_CMYK_8
        }
    }

    /// sRGB output: RGBA keeps its alpha, everything else becomes RGB.
    var lcmsOutput: cmsUInt32Number { self == .rgba ? KILN_TYPE_RGBA_8 : KILN_TYPE_RGB_8 }
    var outputBytesPerPixel: Int { self == .rgba ? 4 : 3 }
}

/// An lcms2 transform from one source profile to sRGB for one pixel layout, deleted when released.
///
/// Perceptual intent (lcms2 and Pillow's default; matrix/TRC profiles such as Adobe RGB fall
/// back to relative colorimetric, CMYK LUT profiles use their A2B0 table), no black point
/// compensation. Creating one costs milliseconds (lcms2 precomputes an optimised pipeline), so
/// `SRGBConverter` caches them; applying one is a table lookup per pixel. lcms2 keeps no
/// per-call state in a transform, so one may be applied from several threads.
final class ColorTransform {
    private let handle: cmsHTRANSFORM
    let layout: ColorLayout

    /// nil when lcms2 cannot build the transform (a profile of the wrong colour space for the
    /// layout, a device link, missing tags).
    init?(from profile: ColorProfile, to sRGB: ColorProfile, layout: ColorLayout) {
        let flags = layout == .rgba ? cmsUInt32Number(cmsFLAGS_COPY_ALPHA) : 0
        guard let created = cmsCreateTransform(profile.handle, layout.lcmsInput, sRGB.handle, layout.lcmsOutput,
                                               cmsUInt32Number(INTENT_PERCEPTUAL), flags) else { return nil }
        handle = created
        self.layout = layout
    }

    deinit { cmsDeleteTransform(handle) }

    /// Converts `input` (pixels in `layout`) to sRGB RGB, or RGBA for `.rgba`.
    func apply(_ input: [UInt8]) -> [UInt8] {
        let pixelCount = input.count / layout.bytesPerPixel
        let outputCount = pixelCount * layout.outputBytesPerPixel
        return [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
            input.withUnsafeBytes { source in
                // Rows of at most 2^24 pixels per call keep the count inside cmsUInt32Number.
                var done = 0
                while done < pixelCount {
                    let count = min(pixelCount - done, 1 << 24)
                    cmsDoTransform(handle, source.baseAddress! + done * layout.bytesPerPixel,
                                   output.baseAddress! + done * layout.outputBytesPerPixel, cmsUInt32Number(count))
                    done += count
                }
            }
            initialized = outputCount
        }
    }
}

/// A grey profile's tone curve mapped to sRGB as a 256-entry table per channel.
///
/// Grey sources reach the pipeline expanded to R = G = B (RGB or RGBA), which lcms2 cannot
/// read with a grey profile; the grey-to-sRGB transform of each of the 256 levels gives the table.
struct GrayToneTable {
    /// `table[level * 3 + channel]`.
    let table: [UInt8]

    init?(from profile: ColorProfile, to sRGB: ColorProfile) {
        guard let transform = cmsCreateTransform(profile.handle, KILN_TYPE_GRAY_8, sRGB.handle, KILN_TYPE_RGB_8,
                                                 cmsUInt32Number(INTENT_PERCEPTUAL), 0) else { return nil }
        defer { cmsDeleteTransform(transform) }
        let levels = (0...255).map { UInt8($0) }
        var table = [UInt8](repeating: 0, count: 256 * 3)
        levels.withUnsafeBytes { input in
            table.withUnsafeMutableBytes { output in
                cmsDoTransform(transform, input.baseAddress, output.baseAddress, 256)
            }
        }
        self.table = table
    }

    /// True when every level maps to itself (a grey profile with sRGB's tone curve).
    var isIdentity: Bool {
        (0..<256).allSatisfy { level in (0..<3).allSatisfy { Int(table[level * 3 + $0]) == level } }
    }

    /// Maps every colour channel of `pixels` (`channels` 3 or 4 per pixel) through the table.
    func apply(_ pixels: [UInt8], channels: Int) -> [UInt8] {
        var output = pixels
        output.withUnsafeMutableBufferPointer { out in
            table.withUnsafeBufferPointer { lut in
                var index = 0
                while index + 2 < out.count {
                    out[index] = lut[Int(out[index]) * 3]
                    out[index + 1] = lut[Int(out[index + 1]) * 3 + 1]
                    out[index + 2] = lut[Int(out[index + 2]) * 3 + 2]
                    index += channels
                }
            }
        }
        return output
    }
}
