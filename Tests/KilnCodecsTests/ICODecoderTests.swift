import KilnModel
@testable import KilnCodecs
import Testing
import KilnTestBytes

@Suite struct ICODecoderTests {
    let decoder = ICODecoder()
    static let palette: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]

    /// A 2x2 8-bit bitmap entry (red, green / blue, white) whose AND mask makes the top-right pixel transparent.
    static let small = TinyBMPWriter(width: 2, height: 2, bitCount: 8, values: [0, 1, 2, 3], palette: palette)
        .bitmap(icon: true, andMask: [false, true, false, false])
    /// A 4x4 32-bit bitmap entry: every pixel (10, 20, 30) at alpha 128, except the first, opaque blue.
    static let large = TinyBMPWriter(width: 4, height: 4, bitCount: 32, values: [0xFF00_00FF] + Array(repeating: 0x800A_141E, count: 15))
        .bitmap(icon: true, andMask: nil)
    /// A 3x3 PNG entry, opaque magenta.
    static let png = TinyPNGWriter.png(width: 3, height: 3, bitDepth: 8, colorType: 2, samples: Array(repeating: [255, 0, 255], count: 9).flatMap { $0 })

    static func icon() -> [UInt8] {
        TinyICOWriter(entries: [.init(width: 2, height: 2, bitCount: 8, data: small), .init(width: 4, height: 4, data: large),
                                .init(width: 0, height: 0, data: png)]).bytes()
    }

    @Test func defaultIsTheLargestEntryAndPagesSelect() throws {
        let data = Self.icon()
        let header = try decoder.readHeader(data)
        #expect(header.format == .ico && header.size == PixelSize(width: 4, height: 4) && header.pageCount == 3 && header.hasAlpha)
        #expect(try decoder.readHeader(data, page: 0).size == PixelSize(width: 2, height: 2))
        // The directory says 0 (256) for the PNG: its own header says 3x3.
        let third = try decoder.readHeader(data, page: 2)
        #expect(third.size == PixelSize(width: 3, height: 3) && !third.hasAlpha && third.pageCount == 3)
        let image = try decoder.decode(data, options: DecodeOptions())
        #expect(image.buffer.size == PixelSize(width: 4, height: 4) && image.buffer.channels == 4)
        #expect(image.buffer.pixel(x: 0, y: 0) == [0, 0, 255, 255] && image.buffer.pixel(x: 3, y: 3) == [10, 20, 30, 128])
    }

    @Test func bitmapEntryUsesItsANDMask() throws {
        let image = try decoder.decode(Self.icon(), options: DecodeOptions(page: 0)).buffer
        #expect(image.channels == 4)
        #expect(image.pixels == [255, 0, 0, 255, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255])
    }

    @Test func pngEntryDecodesThroughPNGDecoder() throws {
        let image = try decoder.decode(Self.icon(), options: DecodeOptions(page: 2))
        #expect(image.header.format == .ico && image.header.pageCount == 3)
        #expect(image.buffer.channels == 3 && image.buffer.pixel(x: 2, y: 2) == [255, 0, 255])
    }

    @Test func thirtyTwoBitsWithZeroAlphaFallBackToTheMask() throws {
        let bitmap = TinyBMPWriter(width: 2, height: 1, bitCount: 32, values: [0x00FF_0000, 0x0000_FF00]).bitmap(icon: true, andMask: [true, false])
        let data = TinyICOWriter(entries: [.init(width: 2, height: 1, data: bitmap)], type: 2).bytes()   // a cursor
        let image = try decoder.decode(data, options: DecodeOptions()).buffer
        #expect(image.pixels == [255, 0, 0, 0, 0, 255, 0, 255])
    }

    @Test func tiesGoToTheDeeperEntryThenTheFirst() throws {
        let shallow = TinyBMPWriter(width: 4, height: 4, bitCount: 8, values: Array(repeating: 0, count: 16), palette: Self.palette)
            .bitmap(icon: true, andMask: nil)
        let data = TinyICOWriter(entries: [.init(width: 4, height: 4, data: shallow), .init(width: 4, height: 4, data: Self.large),
                                           .init(width: 4, height: 4, data: Self.large)]).bytes()
        #expect(ICODecoder.largest(try ICODecoder.entries(data)) == 1)
        #expect(try decoder.decode(data, options: DecodeOptions()).buffer.pixel(x: 0, y: 0) == [0, 0, 255, 255])
    }

    @Test func sixtyFiveThousandEntriesAreRefusedInMilliseconds() throws {
        let data = TinyICOWriter(entries: [.init(width: 2, height: 2, data: Self.small)], declaredCount: 65_535).bytes()
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try decoder.readHeader(data) } }
        #expect(error == .corrupt("ICO has 65535 entries (at most 256)"))
        #expect(decodeFailure { try decoder.decode(data, options: DecodeOptions()) } == .corrupt("ICO has 65535 entries (at most 256)"))
        #expect(elapsed < 0.05)
    }

    @Test func hugeEntryIsOverLimitAndEntriesOutsideTheFileAreCorrupt() throws {
        var bitmap = Self.small
        bitmap.replaceSubrange(4..<12, with: [0xA0, 0x86, 0x01, 0x00, 0x40, 0x0D, 0x03, 0x00])   // 100000 x (200000 / 2)
        let huge = TinyICOWriter(entries: [.init(width: 0, height: 0, data: bitmap)]).bytes()
        #expect(try decoder.readHeader(huge).size == PixelSize(width: 100_000, height: 100_000))
        #expect(decodeFailure { try decoder.decode(huge, options: DecodeOptions()) }?.isOverLimit == true)
        var outside = Self.icon()
        outside[6 + 8] = 0xFF   // the first entry's size, past the end
        outside[6 + 9] = 0xFF
        #expect(decodeFailure { try decoder.readHeader(outside) } == .corrupt("ICO entry 0 is truncated or outside the file"))
        #expect(decodeFailure { try decoder.readHeader([0, 0, 3, 0, 1, 0]) }?.isCorrupt == true)
    }

    @Test func truncatedFilesAreCorruptNeverATrap() throws {
        let errors = decodePrefixes(Self.icon(), with: decoder)
        #expect(errors.allSatisfy { $0?.isCorrupt == true })
    }
}
