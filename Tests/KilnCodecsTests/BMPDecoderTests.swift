import KilnModel
@testable import KilnCodecs
import Testing
import KilnTestBytes

@Suite struct BMPDecoderTests {
    let decoder = BMPDecoder()
    static let palette: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]
    /// 3x2: red, green, blue / white, black, grey.
    static let colours: [UInt32] = [0xFF_0000, 0x00_FF00, 0x00_00FF, 0xFF_FFFF, 0x00_0000, 0x80_8080]
    static let expected: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 128, 128, 128]

    func decode(_ data: [UInt8]) throws -> PixelBuffer { try decoder.decode(data, options: DecodeOptions()).buffer }

    @Test(arguments: [(40, false), (40, true), (108, false), (124, true), (12, false)])
    func twentyFourBitRowsInEitherOrder(_ headerSize: Int, _ topDown: Bool) throws {
        let data = TinyBMPWriter(width: 3, height: 2, bitCount: 24, values: Self.colours, headerSize: headerSize, topDown: topDown).bytes()
        let header = try decoder.readHeader(data)
        #expect(header.format == .bmp && header.size == PixelSize(width: 3, height: 2) && !header.hasAlpha && header.pageCount == 1)
        let image = try decode(data)
        #expect(image.channels == 3 && image.pixels == Self.expected)
    }

    @Test(arguments: [1, 4, 8])
    func paletteDepths(_ bits: Int) throws {
        let palette = bits == 1 ? [Self.palette[0], Self.palette[3]] : Self.palette
        let indices: [UInt32] = bits == 1 ? [0, 1, 0, 1, 1, 0, 1, 0, 0] : [0, 1, 2, 3, 2, 1, 0, 3, 3]
        let data = TinyBMPWriter(width: 9, height: 1, bitCount: bits, values: indices, palette: palette).bytes()
        let image = try decode(data)
        let want = indices.flatMap { [palette[Int($0)].0, palette[Int($0)].1, palette[Int($0)].2] }
        #expect(image.pixels == want)
    }

    @Test func os2CorePaletteOfThreeByteEntries() throws {
        let data = TinyBMPWriter(width: 4, height: 1, bitCount: 8, values: [3, 2, 1, 0], headerSize: 12, palette: Self.palette).bytes()
        #expect(try decode(data).pixels == [255, 255, 255, 0, 0, 255, 0, 255, 0, 255, 0, 0])
    }

    @Test func sixteenBitDefaultAndBitfields() throws {
        let rgb555 = TinyBMPWriter(width: 3, height: 1, bitCount: 16, values: [0x7C00, 0x03E0, 0x001F]).bytes()
        #expect(try decode(rgb555).pixels == [255, 0, 0, 0, 255, 0, 0, 0, 255])
        let rgb565 = TinyBMPWriter(width: 3, height: 1, bitCount: 16, values: [0xF800, 0x07E0, 0x0010], bitfields: true).bytes()
        #expect(try decode(rgb565).pixels == [255, 0, 0, 0, 255, 0, 0, 0, 132])
    }

    @Test func thirtyTwoBitWithoutAlphaMaskIsRGB() throws {
        let data = TinyBMPWriter(width: 2, height: 1, bitCount: 32, values: [0x12FF_0000, 0xFF00_00FF]).bytes()
        #expect(try !decoder.readHeader(data).hasAlpha)
        #expect(try decode(data).pixels == [255, 0, 0, 0, 0, 255])
    }

    @Test func alphaMaskGivesRGBAAndAllZeroAlphaIsOpaque() throws {
        let data = TinyBMPWriter(width: 2, height: 1, bitCount: 32, values: [0x80FF_0000, 0x0000_00FF], headerSize: 108, bitfields: true).bytes()
        #expect(try decoder.readHeader(data).hasAlpha)
        #expect(try decode(data).pixels == [255, 0, 0, 128, 0, 0, 255, 0])
        let zero = TinyBMPWriter(width: 2, height: 1, bitCount: 32, values: [0x00FF_0000, 0x0000_00FF], headerSize: 124, bitfields: true).bytes()
        let image = try decode(zero)
        #expect(image.channels == 4 && image.pixels == [255, 0, 0, 255, 0, 0, 255, 255])
    }

    @Test func pillowHopperDecodes() throws {
        let data = try Corpus.data("pillow_hopper.bmp")
        let image = try decoder.decode(data, options: DecodeOptions())
        #expect(image.buffer.size == PixelSize(width: 128, height: 128) && image.buffer.channels == 3)
        // As Pillow 9 reads it.
        #expect(image.buffer.pixel(x: 0, y: 0) == [20, 21, 67] && image.buffer.pixel(x: 64, y: 64) == [173, 70, 55])
        #expect(image.buffer.pixel(x: 127, y: 127) == [134, 160, 209] && image.buffer.pixel(x: 10, y: 100) == [16, 14, 15])
    }

    /// A BMP of `bits` (8 or 4) bits a pixel whose pixel data is `stream`, run-length encoded (BI_RLE8 / BI_RLE4).
    static func runLength(width: Int, height: Int, bits: Int, _ stream: [UInt8]) -> [UInt8] {
        let plain = TinyBMPWriter(width: width, height: height, bitCount: bits, values: [UInt32](repeating: 0, count: width * height),
                                  palette: palette)
        var data = Array(plain.bytes().dropLast(plain.rows().count)) + stream
        data[30] = bits == 8 ? 1 : 2
        return data
    }

    @Test func runLengthEncodedRowsRunsDeltasAndLiterals() throws {
        // Bottom row: a run of four 1s; then three literals 0 2 3 (padded) and a run of one 1;
        // then a delta of two pixels right and a run of two 3s; end of bitmap.
        let stream: [UInt8] = [4, 1, 0, 0, 0, 3, 0, 2, 3, 0, 1, 1, 0, 0, 0, 2, 2, 0, 2, 3, 0, 1]
        let image = try decode(Self.runLength(width: 4, height: 3, bits: 8, stream))
        let p = Self.palette.map { [$0.0, $0.1, $0.2] }
        #expect(image.channels == 3)
        #expect(image.pixels == (p[0] + p[0] + p[3] + p[3]) + (p[0] + p[2] + p[3] + p[1]) + (p[1] + p[1] + p[1] + p[1]))
        // RLE4: a run of five alternating 1 2, then three literal nibbles 3 0 3 on the next row.
        let four = try decode(Self.runLength(width: 5, height: 2, bits: 4, [5, 0x12, 0, 0, 0, 3, 0x30, 0x30, 0, 1]))
        #expect(four.pixels == (p[3] + p[0] + p[3] + p[0] + p[0]) + (p[1] + p[2] + p[1] + p[2] + p[1]))
        // A run longer than the row is clipped; data that stops before the end is truncated.
        #expect(try decode(Self.runLength(width: 2, height: 1, bits: 8, [255, 2, 0, 1])).pixels == p[2] + p[2])
        #expect(decodeFailure { try decode(Self.runLength(width: 4, height: 3, bits: 8, Array(stream.dropLast(2)))) } == .corrupt("BMP is truncated"))
        let errors = decodePrefixes(Self.runLength(width: 4, height: 3, bits: 8, stream), with: decoder)
        #expect(errors.allSatisfy { $0?.isCorrupt == true })
    }

    @Test func hugeDeclaredSizeIsOverLimitInMilliseconds() throws {
        var data = TinyBMPWriter(width: 1, height: 1, bitCount: 24, values: [0]).bytes()
        data.replaceSubrange(18..<26, with: [0xA0, 0x86, 0x01, 0x00, 0xA0, 0x86, 0x01, 0x00])   // 100000 x 100000
        #expect(try decoder.readHeader(data).size == PixelSize(width: 100_000, height: 100_000))
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try decoder.decode(data, options: DecodeOptions()) } }
        #expect(error?.isOverLimit == true && elapsed < 0.05)
    }

    @Test func brokenHeadersAreCorruptOrUnsupported() throws {
        var zeroWidth = TinyBMPWriter(width: 1, height: 1, bitCount: 24, values: [0]).bytes()
        zeroWidth.replaceSubrange(18..<22, with: [0, 0, 0, 0])
        #expect(decodeFailure { try decoder.readHeader(zeroWidth) } == .corrupt("BMP has no pixels (0x1)"))
        var jpeg = TinyBMPWriter(width: 1, height: 1, bitCount: 8, values: [0], palette: Self.palette).bytes()
        jpeg[30] = 4
        #expect(decodeFailure { try decoder.readHeader(jpeg) } == .unsupported("BMP compression 4"))
        var rle24 = TinyBMPWriter(width: 1, height: 1, bitCount: 24, values: [0]).bytes()
        rle24[30] = 1
        #expect(decodeFailure { try decoder.readHeader(rle24) } == .corrupt("BMP RLE8 on a 24-bit image"))
        var badDepth = TinyBMPWriter(width: 1, height: 1, bitCount: 24, values: [0]).bytes()
        badDepth[28] = 7
        #expect(decodeFailure { try decoder.readHeader(badDepth) }?.message == "BMP of 7 bits a pixel")
        #expect(decodeFailure { try decoder.readHeader(Array("GIF89a and more bytes".utf8)) }?.isCorrupt == true)
    }

    @Test func truncatedFilesAreCorruptNeverATrap() throws {
        let data = TinyBMPWriter(width: 5, height: 3, bitCount: 8, values: [UInt32](repeating: 1, count: 15), palette: Self.palette).bytes()
        #expect(decodeFailure { try decode(Array(data.dropLast(2))) } == .corrupt("BMP is truncated"))
        let errors = decodePrefixes(data, with: decoder)
        #expect(errors.allSatisfy { $0?.isCorrupt == true })
        let hopper = try Corpus.data("pillow_hopper.bmp")
        #expect(decodePrefixes(hopper, step: 997, with: decoder).allSatisfy { $0?.isCorrupt == true })
        let v5 = TinyBMPWriter(width: 3, height: 2, bitCount: 32, values: Self.colours, headerSize: 124, bitfields: true).bytes()
        #expect(decodePrefixes(v5, with: decoder).allSatisfy { $0?.isCorrupt == true })
    }
}
