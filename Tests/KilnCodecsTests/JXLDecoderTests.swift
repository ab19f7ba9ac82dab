import KilnModel
@testable import KilnCodecs
import Testing

@Suite struct JXLDecoderTests {
    let decoder = JXLDecoder()

    @Test func losslessRGBPixelsAndHeader() throws {
        let header = try decoder.readHeader(JXLTestFiles.rgb)
        #expect(header.format == .jxl && header.size == PixelSize(width: 4, height: 3))
        #expect(!header.hasAlpha && header.orientation == 1 && header.frameCount == 1 && header.pageCount == 1)
        #expect(header.hasColourProfile == false)
        let image = try decoder.decode(JXLTestFiles.rgb, options: DecodeOptions())
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
        #expect(image.buffer.channels == 3 && image.iccProfile == nil)
        for y in 0..<3 {
            for x in 0..<4 { #expect(image.buffer.pixel(x: x, y: y) == colours[(x + y) % 4], "(\(x), \(y))") }
        }
    }

    @Test func alphaIsRGBAUnpremultiplied() throws {
        #expect(try decoder.readHeader(JXLTestFiles.rgba).hasAlpha)
        let image = try decoder.decode(JXLTestFiles.rgba, options: DecodeOptions()).buffer
        #expect(image.channels == 4 && image.size == PixelSize(width: 3, height: 2))
        #expect(image.pixel(x: 0, y: 0) == [255, 0, 0, 255] && image.pixel(x: 1, y: 0) == [0, 255, 0, 128])
        #expect(image.pixel(x: 1, y: 1) == [200, 100, 50, 64] && image.pixel(x: 2, y: 0)[3] == 0)
    }

    @Test func greyIsExpandedToRGB() throws {
        let image = try decoder.decode(JXLTestFiles.grey, options: DecodeOptions())
        #expect(image.buffer.channels == 3 && image.buffer.size == PixelSize(width: 5, height: 4))
        #expect(image.buffer.pixel(x: 0, y: 0) == [200, 200, 200] && image.buffer.pixel(x: 4, y: 3) == [77, 77, 77])
    }

    @Test func animationGivesItsFirstFrame() throws {
        let header = try decoder.readHeader(JXLTestFiles.anim)
        #expect(header.frameCount == 1 && header.size == PixelSize(width: 4, height: 4))
        let image = try decoder.decode(JXLTestFiles.anim, options: DecodeOptions()).buffer
        #expect(image.pixel(x: 3, y: 3).prefix(3) == [255, 0, 0])
    }

    @Test func orientationIsReportedAndPixelsStayStored() throws {
        let header = try decoder.readHeader(JXLTestFiles.oriented)
        #expect(header.orientation == 6 && header.size == PixelSize(width: 16, height: 8))
        let image = try decoder.decode(JXLTestFiles.oriented, options: DecodeOptions())
        #expect(image.header.orientation == 6 && image.buffer.size == PixelSize(width: 16, height: 8))
        let left = image.buffer.pixel(x: 1, y: 1), right = image.buffer.pixel(x: 14, y: 6)
        #expect(left[2] > 200 && left[0] < 40 && right[0] > 200 && right[2] < 40, "\(left) \(right)")
    }

    @Test func lossyDecodesClose() throws {
        let image = try decoder.decode(JXLTestFiles.lossy, options: DecodeOptions()).buffer
        #expect(image.size == PixelSize(width: 64, height: 48) && image.channels == 3)
        let p = image.pixel(x: 40, y: 20)
        #expect(abs(Int(p[0]) - 160) <= 8 && abs(Int(p[1]) - 100) <= 8 && abs(Int(p[2]) - 128) <= 8, "\(p)")
    }

    @Test func sizeIsCheckedAgainstTheLimitsBeforeDecoding() throws {
        let data = JXLTestFiles.big
        #expect(data.count < 4096)
        #expect(try decoder.readHeader(data).size == PixelSize(width: 2000, height: 2000))
        var error: DecodeError?
        let refused = seconds {
            error = decodeFailure { try decoder.decode(data, options: DecodeOptions(limits: DecodeLimits(maxPixels: 1_000_000))) }
        }
        #expect(error == .overLimit("2000x2000 is over the limit of 1000000 pixels"))
        var image: DecodedImage?
        let decoded = try seconds { image = try decoder.decode(data, options: DecodeOptions()) }
        #expect(image?.buffer.pixel(x: 1999, y: 1999) == [30, 60, 90])
        #expect(refused < 0.05 && refused < decoded / 5, "refused in \(refused) s, decoded in \(decoded) s")
    }

    @Test func truncatedFilesAreCorruptNeverATrap() throws {
        #expect(JXLDecoder.isQuiet)   // libjxl's failures below print nothing
        #expect(decodeFailure { try decoder.decode([], options: DecodeOptions()) } == .corrupt("JPEG XL is truncated"))
        #expect(decodeFailure { try decoder.readHeader(Array("not a jxl at all".utf8)) }?.isCorrupt == true)
        for file in [JXLTestFiles.lossy, JXLTestFiles.rgba] {
            let errors = decodePrefixes(file, with: decoder)
            let decoded = errors.indices.filter { errors[$0]?.isCorrupt != true }
            #expect(decoded.isEmpty, "prefixes of \(file.count) bytes decoded: \(decoded)")
        }
        // The animation's first frame is whole after 37 of its 60 bytes: those prefixes decode it.
        let errors = decodePrefixes(JXLTestFiles.anim, with: decoder)
        #expect(errors[..<37].allSatisfy { $0?.isCorrupt == true } && errors[37...].allSatisfy { $0 == nil })
    }
}
