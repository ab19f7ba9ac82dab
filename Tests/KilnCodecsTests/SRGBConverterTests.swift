import CLcms2
import KilnModel
@testable import KilnCodecs
import Testing

/// Conversion to sRGB with liblcms2. Reference values come from Pillow 12's ImageCms
/// (`profileToProfile(im, embedded, createProfile("sRGB"), renderingIntent=0)`), which links lcms2
/// too: Kiln's output matched it exactly (mean absolute difference 0.0 over both images).
@Suite struct SRGBConverterTests {
    typealias Sample = (x: Int, y: Int, rgb: [UInt8])

    /// The most saturated oranges of the Adobe RGB rocket move most (naive 230,150,35).
    static let rocketReference: [Sample] = [
        (192, 403, [254, 151, 0]), (76, 367, [255, 169, 0]), (354, 397, [253, 171, 0]),
        (55, 227, [0, 98, 143]), (435, 391, [247, 150, 0]), (320, 213, [137, 124, 114]),
        (10, 10, [0, 31, 59]), (635, 422, [10, 17, 28]),
    ]

    /// coffee_cmyk_swop_icc.jpg through its CMYK profile (naive: 4,0,0 at the first sample).
    static let coffeeReference: [Sample] = [
        (329, 265, [58, 54, 57]), (178, 366, [58, 54, 57]), (333, 316, [62, 54, 57]),
        (211, 244, [63, 54, 57]), (138, 340, [64, 54, 57]), (300, 200, [246, 247, 252]),
        (10, 10, [71, 61, 60]), (595, 395, [155, 94, 68]),
    ]

    static func worstDifference(_ image: PixelBuffer, _ samples: [Sample]) -> Int {
        samples.map { s in zip(image.pixel(x: s.x, y: s.y), s.rgb).map { abs(Int($0) - Int($1)) }.max() ?? 0 }.max() ?? 0
    }

    @Test func adobeRGBRocketChangesColourAndMatchesReference() throws {
        let decoded = try JPEGDecoder().decode(Corpus.data("skimage_rocket.jpg"), options: DecodeOptions())
        let profile = try #require(decoded.iccProfile)
        let converter = SRGBConverter()
        #expect(!converter.isIdentity(profile))
        let converted = converter.convertToSRGB(decoded.buffer, profile: profile)
        #expect(converted.size == decoded.buffer.size && converted.channels == 3)
        // Saturated pixels differ from the naive (unmanaged) decode, by 24 levels in red here.
        let naive = decoded.buffer.pixel(x: 192, y: 403)
        #expect(Int(converted.pixel(x: 192, y: 403)[0]) - Int(naive[0]) >= 15, "naive \(naive)")
        let moved = PixelHelpers.meanAbsDiff(converted, decoded.buffer)
        #expect(moved > 3, "mean change \(moved)")
        let worst = Self.worstDifference(converted, Self.rocketReference)
        #expect(worst <= 2, "worst difference from the Pillow/ImageCms reference: \(worst)")
    }

    @Test func sRGBProfileIsSkipped() throws {
        let decoded = try PNGDecoder().decode(Corpus.data("ljt_vgl_5674_0098.png"), options: DecodeOptions())
        let profile = try #require(decoded.iccProfile)   // sRGB2014, 3024 bytes
        let converter = SRGBConverter()
        #expect(converter.isIdentity(profile))
        #expect(converter.convertToSRGB(decoded.buffer, profile: profile) == decoded.buffer)
        // lcms2's own sRGB, saved to memory, is recognised too.
        let builtIn = try #require(Self.savedProfile(cmsCreate_sRGBProfile()))
        #expect(converter.isIdentity(builtIn))
    }

    /// sRGB is recognised by its primaries and curves, whatever the profile is called; Display P3
    /// (same curve, wider primaries) is converted.
    @Test func sRGBIsRecognisedByContent() throws {
        let d65 = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        let curve = try #require(cmsBuildParametricToneCurve(nil, 4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]))
        defer { cmsFreeToneCurve(curve) }
        func rgbProfile(_ r: (Double, Double), _ g: (Double, Double), _ b: (Double, Double)) -> [UInt8]? {
            var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: r.0, y: r.1, Y: 1), Green: cmsCIExyY(x: g.0, y: g.1, Y: 1),
                                            Blue: cmsCIExyY(x: b.0, y: b.1, Y: 1))
            var white = d65
            var curves: [OpaquePointer?] = [curve, curve, curve]
            return Self.savedProfile(cmsCreateRGBProfile(&white, &primaries, &curves))
        }
        let converter = SRGBConverter()
        let srgbVariant = try #require(rgbProfile((0.64, 0.33), (0.30, 0.60), (0.15, 0.06)))
        #expect(converter.isIdentity(srgbVariant))
        let displayP3 = try #require(rgbProfile((0.680, 0.320), (0.265, 0.690), (0.150, 0.060)))
        #expect(!converter.isIdentity(displayP3))
        let image = PixelBuffer(width: 1, height: 1, channels: 3, pixels: [40, 200, 60])
        let converted = converter.convertToSRGB(image, profile: displayP3).pixels
        #expect(converted[1] > 200 && converted[0] < 40, "P3 green is more saturated than sRGB's: \(converted)")
    }

    @Test func cmykThroughEmbeddedProfileMatchesReference() throws {
        let data = try Corpus.data("coffee_cmyk_swop_icc.jpg")
        let managed = try JPEGDecoder().decode(data, options: DecodeOptions()).buffer
        let naive = try JPEGDecoder(colorConverter: nil).decode(data, options: DecodeOptions()).buffer
        let worst = Self.worstDifference(managed, Self.coffeeReference)
        #expect(worst <= 2, "worst difference from the Pillow/ImageCms reference: \(worst)")
        // This file's CMYK values were made by Pillow's naive RGB→CMYK (K = 0), not through its
        // (test) profile: the naive formula gives coffee.png back, the profile gives what an ICC-aware
        // viewer shows (mean difference 23.9 from coffee.png, 0.0 from ImageCms).
        let original = try PNGDecoder().decode(Corpus.data("skimage_coffee.png"), options: DecodeOptions()).buffer
        let naiveDiff = PixelHelpers.meanAbsDiff(naive, original)
        #expect(naiveDiff < 3, "naive: \(naiveDiff)")
        let managedDiff = PixelHelpers.meanAbsDiff(managed, original)
        #expect(managedDiff > 15, "managed: \(managedDiff)")
    }

    @Test func garbageProfilesReturnTheInput() throws {
        let image = PixelHelpers.gradient(width: 33, height: 17, channels: 4)
        let converter = SRGBConverter()
        var rocketProfile = try #require(try JPEGDecoder().decode(Corpus.data("skimage_rocket.jpg"), options: DecodeOptions()).iccProfile)
        var scrambled = rocketProfile
        for i in stride(from: 132, to: scrambled.count, by: 3) { scrambled[i] ^= 0xA5 }   // tag table and data
        let cmykProfile = try #require(try JPEGDecoder().decode(Corpus.data("coffee_cmyk_swop_icc.jpg"), options: DecodeOptions()).iccProfile)
        rocketProfile.removeLast(rocketProfile.count / 2)
        let garbage: [[UInt8]] = [
            [], [1, 2, 3], [UInt8](repeating: 0, count: 200), (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) },
            rocketProfile,   // truncated
            scrambled,
            cmykProfile,     // CMYK cannot describe RGB pixels
        ]
        for profile in garbage {
            #expect(converter.convertToSRGB(image, profile: profile) == image, "\(profile.count) bytes")
        }
        // A CMYK conversion through an RGB profile is refused: the decoder then uses the naive formula.
        #expect(converter.convertCMYK([0, 0, 0, 0], inverted: false, profile: scrambled) == nil)
    }

    @Test func rgbaKeepsAlphaAndConvertsColourLikeRGB() throws {
        let decoded = try JPEGDecoder().decode(Corpus.data("skimage_rocket.jpg"), options: DecodeOptions())
        let profile = try #require(decoded.iccProfile)
        let rgb = decoded.buffer
        var rgbaPixels = [UInt8](repeating: 0, count: rgb.pixelCount * 4)
        for i in 0..<rgb.pixelCount {
            for c in 0..<3 { rgbaPixels[i * 4 + c] = rgb.pixels[i * 3 + c] }
            rgbaPixels[i * 4 + 3] = UInt8(truncatingIfNeeded: i &* 13)
        }
        let rgba = PixelBuffer(width: rgb.width, height: rgb.height, channels: 4, pixels: rgbaPixels)
        let converter = SRGBConverter()
        let convertedRGB = converter.convertToSRGB(rgb, profile: profile)
        let convertedRGBA = converter.convertToSRGB(rgba, profile: profile)
        #expect(convertedRGBA.channels == 4)
        var alphaKept = true, colourSame = true
        for i in 0..<rgb.pixelCount {
            alphaKept = alphaKept && convertedRGBA.pixels[i * 4 + 3] == rgbaPixels[i * 4 + 3]
            for c in 0..<3 { colourSame = colourSame && convertedRGBA.pixels[i * 4 + c] == convertedRGB.pixels[i * 3 + c] }
        }
        #expect(alphaKept)
        #expect(colourSame)
    }

    /// Grey sources arrive as R = G = B; a grey profile with gamma 1.0 brightens mid-tones.
    @Test func greyProfileMapsTheToneCurve() throws {
        let linear = cmsBuildGamma(nil, 1.0)
        defer { cmsFreeToneCurve(linear) }
        let grey = try #require(Self.savedProfile(cmsCreateGrayProfile(cmsD50_xyY(), linear)))
        let levels = (0..<256).flatMap { [UInt8($0), UInt8($0), UInt8($0)] }
        let image = PixelBuffer(width: 256, height: 1, channels: 3, pixels: levels)
        let converted = SRGBConverter().convertToSRGB(image, profile: grey)
        #expect(converted.pixel(x: 0, y: 0) == [0, 0, 0])
        #expect(converted.pixel(x: 255, y: 0) == [255, 255, 255])
        let mid = converted.pixel(x: 50, y: 0)   // linear 0.196 is sRGB 0.48
        #expect(abs(Int(mid[0]) - 123) <= 2 && mid[0] == mid[1] && mid[1] == mid[2], "\(mid)")
        // A grey profile with sRGB's curve changes nothing.
        let srgbCurve = try #require(cmsBuildParametricToneCurve(nil, 4, [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]))
        defer { cmsFreeToneCurve(srgbCurve) }
        let srgbGrey = try #require(Self.savedProfile(cmsCreateGrayProfile(cmsD50_xyY(), srgbCurve)))
        #expect(SRGBConverter().convertToSRGB(image, profile: srgbGrey) == image)
    }

    @Test func transformsAreCachedPerProfileAndLayout() throws {
        let decoded = try JPEGDecoder().decode(Corpus.data("skimage_rocket.jpg"), options: DecodeOptions())
        let profile = try #require(decoded.iccProfile)
        let converter = SRGBConverter(cacheCapacity: 2)
        let first = converter.convertToSRGB(decoded.buffer, profile: profile)
        #expect(converter.convertToSRGB(decoded.buffer, profile: profile) == first)
        // Building a transform vs finding it again (SHA-256 of the profile and a table lookup).
        let build = (0..<3).map { _ in seconds { _ = SRGBConverter.makeConversion(profile, layout: .rgb) } }.min() ?? 0
        let lookup = (0..<5).map { _ in seconds { _ = converter.conversion(for: profile, layout: .rgb) } }.min() ?? 0
        let apply = (0..<3).map { _ in seconds { _ = converter.convertToSRGB(decoded.buffer, profile: profile) } }.min() ?? 0
        let cmykProfile = try #require(try JPEGDecoder().decode(Corpus.data("coffee_cmyk_swop_icc.jpg"), options: DecodeOptions()).iccProfile)
        let cmykBuild = seconds { _ = SRGBConverter.makeConversion(cmykProfile, layout: .cmyk(inverted: true)) }
        print("SRGBConverter: build Adobe RGB transform \(build * 1000) ms, cached lookup \(lookup * 1000) ms, "
              + "convert 640x427 when cached \(apply * 1000) ms; build 557 KB CMYK transform \(cmykBuild * 1000) ms")
        #expect(lookup < build)
        #expect(converter.cache.count == 1)
        // RGBA is another transform; a third profile evicts the least recently used.
        _ = converter.convertToSRGB(PixelHelpers.gradient(width: 4, height: 4, channels: 4), profile: profile)
        #expect(converter.cache.count == 2)
        let grey = try #require(Self.savedProfile(cmsCreateGrayProfile(cmsD50_xyY(), cmsBuildGamma(nil, 1.8))))
        _ = converter.convertToSRGB(decoded.buffer, profile: grey)
        #expect(converter.cache.count == 2)
        let rgbKey = ColorConversionCache.Key(digest: Digest.sha256Hex(profile), layout: .rgb)
        #expect(converter.cache.value(for: rgbKey) == nil)
    }

    /// `cmsSaveProfileToMem` of a profile lcms2 made (closed afterwards).
    static func savedProfile(_ handle: cmsHPROFILE?) -> [UInt8]? {
        guard let handle else { return nil }
        defer { cmsCloseProfile(handle) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(handle, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard bytes.withUnsafeMutableBytes({ cmsSaveProfileToMem(handle, $0.baseAddress, &size) }) != 0 else { return nil }
        return bytes
    }
}
