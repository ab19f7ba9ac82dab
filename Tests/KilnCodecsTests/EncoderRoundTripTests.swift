import KilnModel
import KilnCodecs
import Testing

@Suite struct EncoderRoundTripTests {
    let rgb = PixelHelpers.gradient(width: 257, height: 131, channels: 3)
    let rgba = PixelHelpers.gradient(width: 257, height: 131, channels: 4)

    @Test func jpegQuality90RoundTrip() throws {
        let data = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, quality: 90))
        #expect(MagicSniffer().sniff(data).format == .jpeg)
        let back = try JPEGDecoder().decode(data, options: DecodeOptions()).buffer
        #expect(back.size == rgb.size)
        let diff = PixelHelpers.meanAbsDiff(back, rgb)
        #expect(diff < 3, "mean abs diff \(diff)")
    }

    @Test func jpegIgnoresAlphaOfRGBA() throws {
        let data = try JPEGEncoder().encode(rgba, options: EncodeOptions(format: .jpeg, quality: 90))
        let back = try JPEGDecoder().decode(data, options: DecodeOptions()).buffer
        #expect(back.channels == 3)
        #expect(PixelHelpers.meanAbsDiff(back, rgb) < 3)
    }

    @Test func progressiveJPEGDecodes() throws {
        let baseline = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, quality: 85))
        let progressive = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, quality: 85, progressive: true))
        #expect(progressive != baseline)
        #expect(progressive.contains(0xC2) && hasMarker(progressive, 0xC2))   // SOF2: progressive DCT
        #expect(!hasMarker(baseline, 0xC2))
        let back = try JPEGDecoder().decode(progressive, options: DecodeOptions()).buffer
        #expect(back.size == rgb.size)
        #expect(PixelHelpers.meanAbsDiff(back, rgb) < 3)
    }

    /// The sampling factors of the SOF marker follow `chromaSubsampling`: luma 2×2 for 4:2:0,
    /// 2×1 for 4:2:2, 1×1 for 4:4:4 (chroma always 1×1).
    @Test func jpegChromaSubsamplingIsWrittenAsAsked() throws {
        var sizes: [ChromaSubsampling: Int] = [:]
        for (mode, factors) in [(ChromaSubsampling.s420, 0x22), (.s422, 0x21), (.s444, 0x11)] {
            let data = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, quality: 85, chromaSubsampling: mode))
            let sof = try #require(data.indices.dropLast(12).first { data[$0] == 0xFF && data[$0 + 1] == 0xC0 })
            // FF C0, length (2), precision, height (2), width (2), components, then id + factors.
            #expect(data[sof + 9] == 3 && data[sof + 11] == UInt8(factors), "\(mode)")
            #expect(data[sof + 14] == 0x11 && data[sof + 17] == 0x11)
            sizes[mode] = data.count
            let back = try JPEGDecoder().decode(data, options: DecodeOptions()).buffer
            #expect(back.size == rgb.size && PixelHelpers.meanAbsDiff(back, rgb) < 3)
        }
        #expect(sizes[.s444]! > sizes[.s420]!)
    }

    @Test func jpegQualityChangesSize() throws {
        let photo = try JPEGDecoder().decode(Corpus.data("skimage_rocket.jpg"), options: DecodeOptions()).buffer
        let low = try JPEGEncoder().encode(photo, options: EncodeOptions(format: .jpeg, quality: 30))
        let high = try JPEGEncoder().encode(photo, options: EncodeOptions(format: .jpeg, quality: 95))
        #expect(low.count * 2 < high.count)
    }

    @Test func jpegEmbedsRGBProfileButNotCMYK() throws {
        let rgbProfile = try #require(try JPEGDecoder().decode(Corpus.data("skimage_rocket.jpg"), options: DecodeOptions()).iccProfile)
        let data = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, iccProfile: rgbProfile))
        #expect(try JPEGDecoder().decode(data, options: DecodeOptions()).iccProfile == rgbProfile)
        let cmykProfile = try #require(try JPEGDecoder().decode(Corpus.data("coffee_cmyk_swop_icc.jpg"), options: DecodeOptions()).iccProfile)
        let plain = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, iccProfile: cmykProfile))
        #expect(try JPEGDecoder().decode(plain, options: DecodeOptions()).iccProfile == nil)
        // A large RGB-tagged profile spans several APP2 segments and comes back whole, in order.
        var big = rgbProfile + [UInt8](repeating: 7, count: 150_000)
        big[0] = 0; big[1] = 2; big[2] = 0x4A; big[3] = 0x70   // header size field, not checked here
        let multi = try JPEGEncoder().encode(rgb, options: EncodeOptions(format: .jpeg, iccProfile: big))
        #expect(try JPEGDecoder().decode(multi, options: DecodeOptions()).iccProfile == big)
    }

    @Test func pngRoundTripIsExact() throws {
        for image in [rgb, rgba] {
            let data = try PNGEncoder().encode(image, options: EncodeOptions(format: .png))
            #expect(MagicSniffer().sniff(data).format == .png)
            let back = try PNGDecoder().decode(data, options: DecodeOptions()).buffer
            #expect(back == image)   // alpha included
        }
    }

    @Test(arguments: [PNGEncoder.Filter.none, .sub, .up, .average, .paeth, .all])
    func pngEveryFilterRoundTrips(_ filter: PNGEncoder.Filter) throws {
        let data = try PNGEncoder(filter: filter).encode(rgba, options: EncodeOptions(format: .png, pngCompressionLevel: 6))
        #expect(try PNGDecoder().decode(data, options: DecodeOptions()).buffer == rgba)
    }

    @Test func pngInterlacedAndLevelsRoundTrip() throws {
        let interlaced = try PNGEncoder().encode(rgba, options: EncodeOptions(format: .png, progressive: true))
        #expect(interlaced[28] == 1)   // IHDR interlace method: Adam7
        #expect(try PNGDecoder().decode(interlaced, options: DecodeOptions()).buffer == rgba)
        let stored = try PNGEncoder().encode(rgb, options: EncodeOptions(format: .png, pngCompressionLevel: 0))
        let best = try PNGEncoder().encode(rgb, options: EncodeOptions(format: .png, pngCompressionLevel: 9))
        #expect(best.count < stored.count)
        #expect(try PNGDecoder().decode(stored, options: DecodeOptions()).buffer == rgb)
    }

    @Test func pngEmbedsICCProfile() throws {
        let profile = try #require(try PNGDecoder().decode(Corpus.data("ljt_vgl_5674_0098.png"), options: DecodeOptions()).iccProfile)
        let data = try PNGEncoder().encode(rgb, options: EncodeOptions(format: .png, iccProfile: profile))
        #expect(try PNGDecoder().decode(data, options: DecodeOptions()).iccProfile == profile)
        // A profile libpng finds invalid (size field does not match) is dropped, not fatal.
        var bogus = profile
        bogus[3] ^= 0x55
        let plain = try PNGEncoder().encode(rgb, options: EncodeOptions(format: .png, iccProfile: bogus))
        let back = try PNGDecoder().decode(plain, options: DecodeOptions())
        #expect(back.iccProfile == nil)
        #expect(back.buffer == rgb)
    }

    @Test func webpLosslessRoundTripIsExact() throws {
        for image in [rgb, rgba] {
            let data = try WebPEncoder().encode(image, options: EncodeOptions(format: .webp, lossless: true))
            #expect(MagicSniffer().sniff(data).format == .webp)
            let back = try WebPDecoder().decode(data, options: DecodeOptions()).buffer
            #expect(back.size == image.size)
            #expect(back.channels == image.channels)
            if image.channels == 3 { #expect(back == image) } else {
                // Exact wherever alpha is not zero (libwebp may rewrite invisible colours).
                for i in 0..<image.pixelCount where image.pixels[i * 4 + 3] != 0 {
                    #expect(Array(back.pixels[i * 4..<i * 4 + 4]) == Array(image.pixels[i * 4..<i * 4 + 4]))
                }
            }
        }
    }

    /// `lossless` selects the VP8L bitstream; lossy output is VP8 (both in a simple RIFF container).
    @Test func webpLosslessWritesVP8LChunk() throws {
        let lossless = try WebPEncoder().encode(rgb, options: EncodeOptions(format: .webp, lossless: true))
        let lossy = try WebPEncoder().encode(rgb, options: EncodeOptions(format: .webp, quality: 90))
        #expect(Array(lossless[0..<4]) == Array("RIFF".utf8) && Array(lossless[8..<12]) == Array("WEBP".utf8))
        #expect(Array(lossless[12..<16]) == Array("VP8L".utf8))
        #expect(Array(lossy[12..<16]) == Array("VP8 ".utf8))
        // With metadata the file becomes extended (VP8X) and still carries VP8L.
        let extended = try WebPEncoder().encode(rgb, options: EncodeOptions(format: .webp, lossless: true,
                                                                           metadata: ImageMetadata(xmp: Array("<x/>".utf8))))
        #expect(Array(extended[12..<16]) == Array("VP8X".utf8))
        #expect(extended[20] & 0x04 != 0)   // VP8X flags: XMP present
        #expect(chunkTypes(extended).contains("VP8L"))
    }

    @Test(arguments: [0, 2, 4, 6])
    func webpLossyRoundTrip(_ method: Int) throws {
        let data = try WebPEncoder().encode(rgb, options: EncodeOptions(format: .webp, quality: 90, webpMethod: method))
        let back = try WebPDecoder().decode(data, options: DecodeOptions()).buffer
        #expect(back.size == rgb.size)
        let diff = PixelHelpers.meanAbsDiff(back, rgb)
        #expect(diff < 4, "method \(method): mean abs diff \(diff)")
    }

    @Test func webpLossyKeepsAlpha() throws {
        let data = try WebPEncoder().encode(rgba, options: EncodeOptions(format: .webp, quality: 90))
        let back = try WebPDecoder().decode(data, options: DecodeOptions()).buffer
        #expect(back.channels == 4)
        let alphaDiff = (0..<rgba.pixelCount).map { abs(Int(back.pixels[$0 * 4 + 3]) - Int(rgba.pixels[$0 * 4 + 3])) }.max() ?? 0
        #expect(alphaDiff <= 2)
    }

    @Test func webpEmbedsICCProfile() throws {
        let profile = try #require(try WebPDecoder().decode(Corpus.data("pillow_flower2.webp"), options: DecodeOptions()).iccProfile)
        let data = try WebPEncoder().encode(rgb, options: EncodeOptions(format: .webp, iccProfile: profile))
        let back = try WebPDecoder().decode(data, options: DecodeOptions())
        #expect(back.iccProfile == profile)
        #expect(back.buffer.size == rgb.size)
    }

    @Test func encodersRefuseEmptyBuffers() {
        let empty = PixelBuffer(width: 0, height: 0, channels: 3, pixels: [])
        for format in ImageFormat.allCases {
            #expect(throws: EncodeError.self) { try Codecs.encoder(for: format).encode(empty, options: EncodeOptions(format: format)) }
        }
    }

    /// The four-character codes of a RIFF WebP file's chunks.
    private func chunkTypes(_ webp: [UInt8]) -> [String] {
        var types: [String] = []
        var pos = 12
        while pos + 8 <= webp.count {
            types.append(String(decoding: webp[pos..<pos + 4], as: UTF8.self))
            let size = Int(webp[pos + 4]) | Int(webp[pos + 5]) << 8 | Int(webp[pos + 6]) << 16 | Int(webp[pos + 7]) << 24
            pos += 8 + size + (size & 1)
        }
        return types
    }

    private func hasMarker(_ jpeg: [UInt8], _ marker: UInt8) -> Bool {
        // Walk the segments up to SOS.
        var pos = 2
        while pos + 4 <= jpeg.count, jpeg[pos] == 0xFF {
            if jpeg[pos + 1] == marker { return true }
            if jpeg[pos + 1] == 0xDA { return false }
            pos += 2 + (Int(jpeg[pos + 2]) << 8 | Int(jpeg[pos + 3]))
        }
        return false
    }
}
