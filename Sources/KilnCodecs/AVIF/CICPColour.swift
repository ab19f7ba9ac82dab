import CLcms2

/// Colour described by CICP code points (an `nclx` `colr` box in AVIF and HEIF, ITU-T H.273)
/// instead of an ICC profile, for files that carry no ICC profile.
///
/// - sRGB and BT.709 primaries (1), or unspecified (2) ones, with the sRGB (13), BT.709 (1),
///   BT.601 (6), unspecified (2) or BT.2020 SDR (14, 15) transfer: taken as sRGB, nothing to do
///   (BT.709's camera curve differs from sRGB's display curve only in the shadows, and browsers
///   show both as sRGB).
/// - Display P3 (12: SMPTE EG 432) and BT.2020 (9) primaries with one of those transfers: an RGB
///   ICC profile with those primaries (D65) and the sRGB curve is made with lcms2 and handed to the
///   pipeline's conversion to sRGB (`ColorConverting`), like an embedded profile.
/// - Anything else (PQ and HLG HDR transfers, other primaries): decoded as if sRGB; no tone
///   mapping is attempted. The pixels keep their code values, which looks flat for HDR content.
enum CICPColour {
    /// The ICC profile to convert from, nil when the pixels are sRGB already (or treated as such).
    static func profile(primaries: Int, transfer: Int) -> [UInt8]? {
        guard [1, 2, 6, 13, 14, 15].contains(transfer) else { return nil }
        let xy: [(Double, Double)]
        switch primaries {
        case 12: xy = [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)]       // Display P3
        case 9: xy = [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046)]        // BT.2020
        default: return nil
        }
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1.0)
        var prim = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: xy[0].0, y: xy[0].1, Y: 1),
                                   Green: cmsCIExyY(x: xy[1].0, y: xy[1].1, Y: 1),
                                   Blue: cmsCIExyY(x: xy[2].0, y: xy[2].1, Y: 1))
        // The sRGB curve as lcms2's parametric type 4: Y = (aX + b)^g for X >= d, else cX.
        var params: [cmsFloat64Number] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        guard let curve = cmsBuildParametricToneCurve(nil, 4, &params) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&white, &prim, &curves) else { return nil }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return bytes
    }
}
