import Foundation
import KilnCodecs
import KilnFuzzProbes
import KilnModel
import Testing

/// Structures that cost a decoder without being an image (issue 9, "Bad input, once more"),
/// read from the regression folder: each is refused with a typed error before libpng or
/// libjpeg walks it, or, for metadata, costs nothing.
@Suite struct HostileStructureTests {
    static func input(_ relative: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: FuzzRegressionTests.folder.appendingPathComponent(relative)))
    }

    @Test func pngWithMoreThanAThousandChunksIsCorrupt() throws {
        let data = try Self.input("FuzzPNGChunks/text_chunks_1001.png")
        #expect(throws: DecodeError.corrupt("more than 1000 chunks besides the image data")) {
            try PNGDecoder().readHeader(data)
        }
        #expect(throws: DecodeError.corrupt("more than 1000 chunks besides the image data")) {
            try PNGDecoder().decode(data, options: DecodeOptions())
        }
    }

    @Test func pngTextChunksNeverReachLibpng() throws {
        // Four zTXt chunks that inflate to 1 MB each: decoded, and the pixels are the image's.
        let data = try Self.input("FuzzDecode/ztxt_1mb_x4.png")
        let decoded = try PNGDecoder().decode(data, options: DecodeOptions())
        #expect(decoded.buffer.size == PixelSize(width: 32, height: 24))
        #expect(decoded.buffer.pixels[0...2] == [0, 0, 0])
        #expect(decoded.buffer.pixels[3...5] == [8, 0, 4])
    }

    @Test func jpegWithMoreThan500SegmentsIsCorrupt() throws {
        let data = try Self.input("FuzzJPEGMarkers/app_segments_501.jpg")
        #expect(throws: DecodeError.corrupt("more than 500 marker segments before the first scan")) {
            try JPEGDecoder().readHeader(data)
        }
        #expect(throws: DecodeError.self) { try JPEGDecoder().decode(data, options: DecodeOptions()) }
    }

    @Test func exifLoopsAndHugeCountsReadOneTag() throws {
        #expect(CodecProbe.exif(try Self.input("FuzzExif/ifd_self_loop.tiff")).orientation == 6)
        #expect(CodecProbe.exif(try Self.input("FuzzExif/huge_counts.tiff")).orientation == 6)
    }

    @Test(arguments: ["chunk_bigger_than_file", "chunk_overflows_32bit", "riff_bigger_than_file", "riff_max",
                      "riff_odd", "vp8x_exif_overflows_32bit"])
    func webpWhoseSizesLieIsCorrupt(_ name: String) throws {
        let data = try Self.input("FuzzWebPContainer/\(name).webp")
        do {
            _ = try WebPDecoder().decode(data, options: DecodeOptions())
            Issue.record("\(name) decoded")
        } catch {
            guard case .corrupt = error else { Issue.record("\(name): \(error)"); return }
        }
    }
}
