import KilnModel
import KilnCodecs
import Testing
import KilnTestBytes

@Suite struct PNGDecoderTests {
    let decoder = PNGDecoder()

    /// A 16-bit file without gAMA decodes like its 8-bit reduction (not as linear light, which
    /// would brighten mid-tones by up to ~90 levels).
    @Test func sixteenBitWithoutGammaMatchesEightBit() throws {
        let values8 = (0..<(16 * 4 * 3)).map { ($0 * 37) % 256 }
        let png8 = TinyPNGWriter.png(width: 16, height: 4, bitDepth: 8, colorType: 2, samples: values8)
        let png16 = TinyPNGWriter.png(width: 16, height: 4, bitDepth: 16, colorType: 2, samples: values8.map { $0 * 257 })
        let image8 = try decoder.decode(png8, options: DecodeOptions()).buffer
        let image16 = try decoder.decode(png16, options: DecodeOptions()).buffer
        #expect(image8.pixels == values8.map(UInt8.init))
        #expect(image16.pixels == image8.pixels)
    }

    /// With a gAMA chunk (PngSuite's gamma 1.0) both depths are converted the same way.
    @Test func sixteenBitWithGammaMatchesEightBitWithGamma() throws {
        let values8 = (0..<(16 * 4 * 4)).map { ($0 * 29) % 256 }
        let png8 = TinyPNGWriter.png(width: 16, height: 4, bitDepth: 8, colorType: 6, samples: values8, gamma: 100_000)
        let png16 = TinyPNGWriter.png(width: 16, height: 4, bitDepth: 16, colorType: 6, samples: values8.map { $0 * 257 }, gamma: 100_000)
        let image8 = try decoder.decode(png8, options: DecodeOptions()).buffer
        let image16 = try decoder.decode(png16, options: DecodeOptions()).buffer
        #expect(image8.channels == 4 && image16.channels == 4)
        let worst = zip(image8.pixels, image16.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 2, "largest difference \(worst)")
        // Alpha is never gamma-converted.
        for i in stride(from: 3, to: image8.pixels.count, by: 4) { #expect(image8.pixels[i] == UInt8(values8[i])) }
    }

    /// Grey, grey + alpha and palette files come out as RGB(A) with exactly the stored levels.
    @Test func greyGreyAlphaAndPaletteKeepTheirLook() throws {
        let levels = (0..<64).map { ($0 * 53) % 256 }
        let grey = try decoder.decode(TinyPNGWriter.png(width: 16, height: 4, bitDepth: 8, colorType: 0, samples: levels), options: DecodeOptions()).buffer
        #expect(grey.channels == 3)
        #expect(grey.pixels == levels.flatMap { [UInt8($0), UInt8($0), UInt8($0)] })
        let grey16 = try decoder.decode(TinyPNGWriter.png(width: 16, height: 4, bitDepth: 16, colorType: 0, samples: levels.map { $0 * 257 }), options: DecodeOptions()).buffer
        #expect(grey16 == grey)

        let greyAlpha = (0..<64).flatMap { [($0 * 53) % 256, ($0 * 97) % 256] }
        let ga = try decoder.decode(TinyPNGWriter.png(width: 16, height: 4, bitDepth: 8, colorType: 4, samples: greyAlpha), options: DecodeOptions()).buffer
        #expect(ga.channels == 4)
        #expect(ga.pixels == (0..<64).flatMap { i -> [UInt8] in
            let v = UInt8(greyAlpha[i * 2]), a = UInt8(greyAlpha[i * 2 + 1])
            return [v, v, v, a]
        })

        let palette: [UInt8] = [255, 0, 0, 0, 128, 0, 10, 20, 250, 200, 200, 200]
        let indices = (0..<64).map { $0 % 4 }
        let opaque = try decoder.decode(TinyPNGWriter.png(width: 16, height: 4, bitDepth: 8, colorType: 3, samples: indices, palette: palette), options: DecodeOptions()).buffer
        #expect(opaque.channels == 3)
        let expectedOpaque: [UInt8] = indices.flatMap { (index: Int) -> [UInt8] in Array(palette[index * 3..<index * 3 + 3]) }
        #expect(opaque.pixels == expectedOpaque)
        let trns: [UInt8] = [255, 0, 128]   // entry 3 has no tRNS value: opaque
        let translucent = try decoder.decode(TinyPNGWriter.png(width: 16, height: 4, bitDepth: 8, colorType: 3, samples: indices, palette: palette, transparency: trns), options: DecodeOptions()).buffer
        #expect(translucent.channels == 4)
        let expected: [UInt8] = indices.flatMap { (index: Int) -> [UInt8] in
            let alpha: UInt8 = index < trns.count ? trns[index] : 255
            return Array(palette[index * 3..<index * 3 + 3]) + [alpha]
        }
        #expect(translucent.pixels == expected)
    }

    @Test func pngSuiteSixteenBitIsNotDarkened() throws {
        // basn2c16 and basn2c08 both carry gAMA 1.0; the 16-bit gradient must come out at least as
        // bright as its high bytes (linear → sRGB only brightens).
        let image = try decoder.decode(Corpus.data("pngsuite_basn2c16.png"), options: DecodeOptions()).buffer
        #expect(image.channels == 3)
        #expect(image.pixel(x: 0, y: 0) == [255, 255, 0])
        #expect(image.pixel(x: 1, y: 0)[0] >= 247)    // raw high byte 247
        #expect(image.pixel(x: 0, y: 16)[1] >= 123)   // raw high byte 123
    }

    @Test func alphaAndTRNSGiveRGBA() throws {
        #expect(try decoder.decode(Corpus.data("pngsuite_basn4a16.png"), options: DecodeOptions()).buffer.channels == 4)
        #expect(try decoder.decode(Corpus.data("pngsuite_basn3p04.png"), options: DecodeOptions()).buffer.channels == 3)
        #expect(try decoder.readHeader(Corpus.data("pillow_apng_fctl_actl.png")).hasAlpha)
    }

    @Test func readsICCProfile() throws {
        let image = try decoder.decode(Corpus.data("ljt_vgl_5674_0098.png"), options: DecodeOptions())
        let icc = try #require(image.iccProfile)
        #expect(icc.count == 3024)
        #expect(Array(icc[36..<40]) == Array("acsp".utf8))
        #expect(try decoder.decode(Corpus.data("skimage_coffee.png"), options: DecodeOptions()).iccProfile == nil)
    }

    @Test func crcAndTruncationErrorsCarryLibpngMessages() throws {
        let crc = decodeFailure { try decoder.decode(Corpus.data("libpng_badcrc.png"), options: DecodeOptions()) }
        #expect(crc?.message.contains("CRC") == true, "\(String(describing: crc))")
        let truncated = decodeFailure { try decoder.decode(Corpus.data("coffee_truncated_60pct.png"), options: DecodeOptions()) }
        #expect(truncated?.isCorrupt == true)
        #expect(decodeFailure { try decoder.readHeader(Corpus.data("pngsuite_xc1n0g08.png")) }?.isCorrupt == true)
    }

    @Test func bombHeaderIsReadWithoutDecoding() throws {
        let header = try decoder.readHeader(Corpus.data("png_bomb_12000x12000_gray8.png"))
        #expect(header.size == PixelSize(width: 12000, height: 12000))
        #expect(!header.hasAlpha)
    }
}

@Suite struct PNGChunkLengthTests {
    /// A chunk that claims more bytes than the file has is refused at once, before libpng would
    /// allocate and zero the claimed length (1 GiB and seconds of CPU for a 57-byte file).
    @Test func oversizedChunkIsRefusedQuickly() throws {
        let data = try Corpus.data("libpng_huge_tEXt_chunk.png")
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try PNGDecoder().readHeader(data) } }
        #expect(error?.isCorrupt == true)
        #expect(error?.message.hasPrefix("tEXt") == true, "\(String(describing: error))")
        #expect(elapsed < 0.05, "took \(elapsed) s")
    }

    @Test func oversizedChunkAfterImageDataIsRefused() throws {
        var png = TinyPNGWriter.png(width: 2, height: 2, bitDepth: 8, colorType: 2, samples: Array(repeating: 9, count: 12))
        let iend = Array(png.suffix(12))
        png.removeLast(12)
        png += [0x3F, 0xFF, 0xFF, 0xFF] + Array("zTXt".utf8) + [1, 2, 3] + iend
        let error = decodeFailure { try PNGDecoder().decode(png, options: DecodeOptions()) }
        #expect(error?.isCorrupt == true)
    }

    @Test func truncatedImageDataIsLeftToLibpng() throws {
        let data = try Corpus.data("coffee_truncated_60pct.png")
        #expect(try PNGDecoder().readHeader(data).size == PixelSize(width: 600, height: 400))
        let error = decodeFailure { try PNGDecoder().decode(data, options: DecodeOptions()) }
        #expect(error?.isCorrupt == true)
    }
}
