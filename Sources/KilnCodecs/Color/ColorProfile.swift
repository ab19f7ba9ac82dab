import CLcms2
import Glibc

/// An ICC profile opened by liblcms2 (`cmsOpenProfileFromMem`), closed when released.
///
/// Opening parses the header and the tag directory; tags are read lazily. lcms2 refuses
/// truncated or malformed profiles here (nil), and its default error handler prints nothing.
final class ColorProfile {
    let handle: cmsHPROFILE

    /// nil when lcms2 cannot parse `bytes`.
    convenience init?(_ bytes: [UInt8]) {
        guard bytes.count >= 132, bytes.count <= Int(UInt32.max) else { return nil }
        let opened = bytes.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }
        guard let opened else { return nil }
        self.init(handle: opened)
    }

    /// Takes ownership of an open profile.
    private init(handle: cmsHPROFILE) {
        self.handle = handle
    }

    /// lcms2's built-in sRGB (IEC 61966-2.1, D50-adapted primaries), the target of every conversion.
    static func makeSRGB() -> ColorProfile? {
        cmsCreate_sRGBProfile().map { ColorProfile(handle: $0) }
    }

    deinit { cmsCloseProfile(handle) }

    /// The data colour space the profile describes.
    enum Space {
        case rgb, gray, cmyk, other
    }

    var space: Space {
        switch cmsGetColorSpace(handle) {
        case cmsSigRgbData: .rgb
        case cmsSigGrayData: .gray
        case cmsSigCmykData: .cmyk
        default: .other
        }
    }

    /// True when this is an RGB matrix/TRC profile whose primaries and tone curves are sRGB's
    /// within a fraction of an 8-bit level: converting would change nothing visible. Recognises
    /// sRGB by content, not by name (sRGB2014, HP's "sRGB IEC61966-2.1", camera and v4 variants).
    var isSRGB: Bool {
        guard space == .rgb, cmsIsMatrixShaper(handle) != 0, let reference = SRGBReference.shared else { return false }
        let colorants = [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag]
        for (index, tag) in colorants.enumerated() {
            guard let raw = cmsReadTag(handle, tag) else { return false }
            let xyz = raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee
            let expected = reference.colorants[index]
            guard abs(xyz.X - expected.X) < 0.002, abs(xyz.Y - expected.Y) < 0.002, abs(xyz.Z - expected.Z) < 0.002 else {
                return false
            }
        }
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(handle, tag) else { return false }
            let curve = OpaquePointer(raw)   // cmsToneCurve is opaque
            for step in 0...32 {
                let v = Float(step) / 32
                guard abs(cmsEvalToneCurveFloat(curve, v) - SRGBReference.decode(v)) < 0.5 / 255 else { return false }
            }
        }
        return true
    }
}

/// sRGB's colorants as lcms2's built-in profile states them, read once per process.
struct SRGBReference: Sendable {
    var colorants: [cmsCIEXYZ]

    static let shared: SRGBReference? = {
        guard let profile = ColorProfile.makeSRGB() else { return nil }
        var colorants: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let raw = cmsReadTag(profile.handle, tag) else { return nil }
            colorants.append(raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        return SRGBReference(colorants: colorants)
    }()

    /// The sRGB transfer function (encoded 0...1 to linear 0...1).
    static func decode(_ v: Float) -> Float {
        v <= 0.04045 ? v / 12.92 : powf((v + 0.055) / 1.055, 2.4)
    }
}
