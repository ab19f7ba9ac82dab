import KilnModel
@testable import KilnCodecs
import Testing
import KilnTestBytes

@Suite struct TIFFDecoderTests {
    let decoder = TIFFDecoder()

    /// 3x2 RGB: red, green, blue / white, black, grey.
    static let rgb: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 128, 128, 128]

    static func file(_ pages: TinyTIFFWriter.Page...) -> [UInt8] { TinyTIFFWriter(pages: pages).bytes() }

    @Test func rgbPixelsAndHeader() throws {
        let data = Self.file(.init(width: 3, height: 2, samples: 3, pixels: Self.rgb))
        let header = try decoder.readHeader(data)
        #expect(header.format == .tiff && header.size == PixelSize(width: 3, height: 2))
        #expect(header.pageCount == 1 && header.orientation == 1 && !header.hasAlpha && header.hasColourProfile == false)
        let image = try decoder.decode(data, options: DecodeOptions())
        #expect(image.buffer.channels == 3 && image.buffer.pixels == Self.rgb)
        #expect(image.iccProfile == nil && image.header == header)
    }

    @Test func pagesAreCountedAndSelected() throws {
        let grey = [UInt8](repeating: 77, count: 20)
        let data = Self.file(.init(width: 3, height: 2, samples: 3, pixels: Self.rgb), .init(width: 5, height: 4, samples: 1, pixels: grey))
        let first = try decoder.readHeader(data)
        #expect(first.pageCount == 2 && first.size == PixelSize(width: 3, height: 2))
        let second = try decoder.readHeader(data, page: 1)
        #expect(second.pageCount == 2 && second.size == PixelSize(width: 5, height: 4))
        let image = try decoder.decode(data, options: DecodeOptions(page: 1))
        #expect(image.buffer.size == PixelSize(width: 5, height: 4) && image.buffer.channels == 3)
        #expect(image.buffer.pixel(x: 4, y: 3) == [77, 77, 77])
        #expect(try decoder.decode(data, options: DecodeOptions()).buffer.pixels == Self.rgb)
        #expect(throws: DecodeError.corrupt("TIFF has no page 2 (it has 2)")) { try decoder.readHeader(data, page: 2) }
    }

    @Test func orientationIsReportedAndPixelsStayStored() throws {
        let data = Self.file(.init(width: 3, height: 2, samples: 3, pixels: Self.rgb, orientation: 6))
        #expect(try decoder.readHeader(data).orientation == 6)
        let image = try decoder.decode(data, options: DecodeOptions())
        #expect(image.header.orientation == 6)
        #expect(image.buffer.size == PixelSize(width: 3, height: 2) && image.buffer.pixels == Self.rgb)
        for orientation in [2, 3, 4, 8] {
            let file = Self.file(.init(width: 3, height: 2, samples: 3, pixels: Self.rgb, orientation: orientation))
            #expect(try decoder.decode(file, options: DecodeOptions()).buffer.pixels == Self.rgb, "orientation \(orientation)")
        }
    }

    @Test func libtiffToolsFileTiledLZWOrientedBytiffset() throws {
        let data = TIFFTestFiles.gradientTiledOriented
        let header = try decoder.readHeader(data)
        #expect(header.size == PixelSize(width: 32, height: 24) && header.orientation == 6)
        let image = try decoder.decode(data, options: DecodeOptions())
        #expect(image.buffer.pixel(x: 0, y: 0) == [0, 0, 100])
        #expect(image.buffer.pixel(x: 31, y: 0) == [248, 0, 100])      // stored, not rotated
        #expect(image.buffer.pixel(x: 17, y: 23) == [136, 230, 100])   // a pixel of the second tile row
    }

    @Test func bigEndianAndBigTIFF() throws {
        let be = try decoder.decode(TIFFTestFiles.bigEndianDeflate, options: DecodeOptions())
        #expect(be.header.pageCount == 1 && be.buffer.size == PixelSize(width: 8, height: 6) && be.buffer.pixel(x: 7, y: 5) == [0, 128, 255])
        let big = try decoder.decode(TIFFTestFiles.bigTIFFPackBits, options: DecodeOptions())
        #expect(big.header.pageCount == 1 && big.header.hasAlpha && big.buffer.channels == 4)
        #expect(big.buffer.pixel(x: 0, y: 0) == [255, 0, 0, 128] && big.buffer.pixel(x: 1, y: 1) == [0, 0, 255, 255])
    }

    @Test func jpegCompressedStrips() throws {
        let image = try decoder.decode(TIFFTestFiles.gradientJPEG, options: DecodeOptions())
        #expect(image.buffer.size == PixelSize(width: 32, height: 24) && image.buffer.channels == 3)
        let p = image.buffer.pixel(x: 20, y: 12)
        #expect(abs(Int(p[0]) - 160) < 12 && abs(Int(p[1]) - 120) < 12 && abs(Int(p[2]) - 100) < 12)
    }

    @Test func unassociatedAndAssociatedAlphaComeOutUnpremultiplied() throws {
        let straight: [UInt8] = [255, 0, 0, 128, 0, 0, 255, 0, 10, 200, 30, 255]
        let unassociated = Self.file(.init(width: 3, height: 1, samples: 4, pixels: straight, extraSample: 2))
        #expect(try decoder.readHeader(unassociated).hasAlpha)
        let a = try decoder.decode(unassociated, options: DecodeOptions()).buffer
        #expect(a.channels == 4 && a.pixel(x: 0, y: 0) == [255, 0, 0, 128] && a.pixel(x: 2, y: 0) == [10, 200, 30, 255])
        #expect(a.pixel(x: 1, y: 0)[3] == 0)
        let premultiplied: [UInt8] = [128, 0, 0, 128, 0, 0, 0, 0, 10, 200, 30, 255]
        let associated = Self.file(.init(width: 3, height: 1, samples: 4, pixels: premultiplied, extraSample: 1))
        let b = try decoder.decode(associated, options: DecodeOptions()).buffer
        #expect(b.pixel(x: 0, y: 0) == [255, 0, 0, 128] && b.pixel(x: 2, y: 0) == [10, 200, 30, 255] && !b.isPremultiplied)
    }

    @Test func iccProfileIsReturned() throws {
        let icc = (0..<200).map { UInt8($0 % 251) }
        let data = Self.file(.init(width: 3, height: 2, samples: 3, pixels: Self.rgb, icc: icc))
        #expect(try decoder.readHeader(data).hasColourProfile == true)
        #expect(try decoder.decode(data, options: DecodeOptions()).iccProfile == icc)
    }

    @Test func hugeDeclaredSizeIsOverLimitInMilliseconds() throws {
        let data = Self.file(.init(width: 4, height: 4, samples: 3, pixels: [UInt8](repeating: 9, count: 48),
                                   declaredWidth: 100_000, declaredHeight: 100_000))
        #expect(data.count < 4096)
        var header: ImageHeader?
        let headerTime = try seconds { header = try decoder.readHeader(data) }
        #expect(header?.size == PixelSize(width: 100_000, height: 100_000))
        #expect(decodeFailure { try DecodeLimits().check(#require(header)) }?.isOverLimit == true)
        var error: DecodeError?
        let decodeTime = seconds { error = decodeFailure { try decoder.decode(data, options: DecodeOptions()) } }
        #expect(error?.isOverLimit == true, "\(String(describing: error))")
        #expect(headerTime < 0.05 && decodeTime < 0.05, "header \(headerTime) s, decode \(decodeTime) s")
    }

    @Test func absurdTileIsRefusedBeforeReading() throws {
        let data = Self.file(.init(width: 16, height: 16, samples: 3, pixels: [UInt8](repeating: 1, count: 768), tile: (100_000, 16)))
        let error = decodeFailure { try decoder.decode(data, options: DecodeOptions()) }
        #expect(error == .corrupt("TIFF tiles of 100000x16 are out of range"))
    }

    @Test func moreThan1024DirectoriesAreCorrupt() throws {
        let page = TinyTIFFWriter.Page(width: 1, height: 1, samples: 1, pixels: [5])
        let data = TinyTIFFWriter(pages: Array(repeating: page, count: 1025)).bytes()
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try decoder.readHeader(data) } }
        #expect(error == .corrupt("TIFF has more than 1024 directories"))
        #expect(elapsed < 0.5)
        let fine = TinyTIFFWriter(pages: Array(repeating: page, count: 1024)).bytes()
        #expect(try decoder.readHeader(fine).pageCount == 1024)
    }

    @Test func truncatedFilesAreCorruptNeverATrap() throws {
        let data = Self.file(.init(width: 3, height: 2, samples: 3, pixels: Self.rgb))
        #expect(decodeFailure { try decoder.decode(Array(data[..<20]), options: DecodeOptions()) }?.isCorrupt == true)
        #expect(decodeFailure { try decoder.decode([], options: DecodeOptions()) } == .corrupt("TIFF is truncated"))
        #expect(decodeFailure { try decoder.decode(Array("not a tiff".utf8), options: DecodeOptions()) }?.isCorrupt == true)
        let errors = decodePrefixes(data, with: decoder)
        // The directory is at the end: only prefixes that lack part of its next-directory offset (0) decode.
        #expect(errors[..<(data.count - 4)].allSatisfy { $0 != nil }, "a prefix decoded")
        let errorsTiled = decodePrefixes(TIFFTestFiles.gradientTiledOriented, step: 7, with: decoder)
        #expect(errorsTiled.allSatisfy { $0 != nil })
        #expect(decodePrefixes(TIFFTestFiles.gradientJPEG, step: 3, with: decoder).allSatisfy { $0 != nil })
    }
}
