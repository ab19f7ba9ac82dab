/// CMYK to RGB for CMYK and YCCK JPEGs without a usable CMYK profile (no colour management).
///
/// Adobe applications (and Pillow) write CMYK JPEGs inverted, flagged by an APP14 "Adobe" marker:
/// a raw value of 255 means no ink. Then R = C·K/255, G = M·K/255, B = Y·K/255 on the raw values.
/// Without the Adobe marker the values are taken as plain ink amounts: R = (255−C)(255−K)/255.
/// With an embedded CMYK profile `JPEGDecoder` converts through it with lcms2 instead (`SRGBConverter`).
enum CMYKConversion {
    /// Converts tightly packed CMYK bytes (4 per pixel) to RGB (3 per pixel).
    static func rgb(fromCMYK cmyk: [UInt8], inverted: Bool) -> [UInt8] {
        let pixelCount = cmyk.count / 4
        return [UInt8](unsafeUninitializedCapacity: pixelCount * 3) { rgb, initialized in
            cmyk.withUnsafeBufferPointer { source in
                guard let src = source.baseAddress, let dst = rgb.baseAddress else { return }
                let flip: UInt32 = inverted ? 0 : 255
                for index in 0..<pixelCount {
                    let s = src + index * 4, d = dst + index * 3
                    let k = UInt32(s[3]) ^ flip
                    d[0] = scale(UInt32(s[0]) ^ flip, k)
                    d[1] = scale(UInt32(s[1]) ^ flip, k)
                    d[2] = scale(UInt32(s[2]) ^ flip, k)
                }
            }
            initialized = pixelCount * 3
        }
    }

    /// Rounded a·b/255 for a, b in 0...255.
    @inline(__always)
    private static func scale(_ a: UInt32, _ b: UInt32) -> UInt8 {
        let product = a * b + 128
        return UInt8(truncatingIfNeeded: (product + (product >> 8)) >> 8)
    }
}
