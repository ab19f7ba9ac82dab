import Foundation
import KilnCodecs
import KilnFuzzProbes
import KilnModel
import Testing

/// The raster inputs of issue 38 on files other writers made: the FuzzRasterInputs seeds (Pillow
/// and libtiff-tools files behind the harness's selector byte) decode to what Pillow wrote, and the
/// hostile regression inputs are refused from their headers, quickly.
@Suite struct RasterInputFilesTests {
    static let seeds = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Seeds/FuzzRasterInputs")

    static func seed(_ name: String) throws -> [UInt8] {
        Array(try [UInt8](Data(contentsOf: seeds.appendingPathComponent(name))).dropFirst())
    }

    static func hostile(_ name: String) throws -> [UInt8] {
        Array(try HostileStructureTests.input("FuzzRasterInputs/\(name)").dropFirst())
    }

    @Test func pillowFilesDecodeToWhatPillowWrote() throws {
        let options = DecodeOptions()
        let bmp = try BMPDecoder().decode(Self.seed("bmp_24.bin"), options: options).buffer
        #expect(bmp.size == PixelSize(width: 8, height: 6) && bmp.pixel(x: 0, y: 0) == [255, 0, 0] && bmp.pixel(x: 1, y: 1) == [0, 0, 255])
        let bmp8 = try BMPDecoder().decode(Self.seed("bmp_8.bin"), options: options).buffer
        #expect(bmp8.pixel(x: 0, y: 0) == [255, 0, 0] && bmp8.pixel(x: 1, y: 1) == [0, 0, 255])
        for name in ["ico_bmp.bin", "ico_png.bin"] {
            let ico = try ICODecoder().decode(Self.seed(name), options: options).buffer
            #expect(ico.channels == 4 && ico.pixel(x: 0, y: 0) == [255, 0, 0, 128] && ico.pixel(x: 1, y: 1) == [0, 0, 255, 255], "\(name)")
        }
        let tiff = try TIFFDecoder().decode(Self.seed("tiff_lzw.bin"), options: options).buffer
        #expect(tiff.size == PixelSize(width: 8, height: 6) && tiff.pixel(x: 7, y: 5) == [0, 128, 255])
        let rgba = try TIFFDecoder().decode(Self.seed("tiff_rgba.bin"), options: options).buffer
        #expect(rgba.channels == 4 && rgba.pixel(x: 0, y: 0) == [255, 0, 0, 128] && rgba.pixel(x: 1, y: 1) == [0, 0, 255, 255])
    }

    @Test func everySeedPassesTheProbe() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.seeds.path).filter { $0.hasSuffix(".bin") }
        #expect(names.count >= 10)
        for name in names {
            let data = try [UInt8](Data(contentsOf: Self.seeds.appendingPathComponent(name)))
            let summary = try CodecProbe.rasterInput(data, limits: DecodeLimits(maxPixels: 1 << 20))
            #expect(summary?.header != nil, "\(name)")
        }
    }

    @Test(arguments: [("tiff_100000x100000.bin", 0), ("bmp_100000x100000.bin", 1)])
    func hugeDeclaredSizesAreOverLimitFromTheHeader(_ name: String, _ kind: Int) throws {
        let data = try Self.hostile(name)
        let decoder: any ImageDecoding = kind == 0 ? TIFFDecoder() : BMPDecoder()
        let header = try decoder.readHeader(data)
        #expect(header.size == PixelSize(width: 100_000, height: 100_000))
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try decoder.decode(data, options: DecodeOptions()) } }
        #expect(error?.isOverLimit == true, "\(String(describing: error))")
        #expect(elapsed < 0.05, "\(name) took \(elapsed) s to refuse")
    }

    @Test func icoOf65535EntriesAndBMPOfInt32MinHeightAreCorrupt() throws {
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try ICODecoder().readHeader(Self.hostile("ico_65535_entries.bin")) } }
        #expect(error == .corrupt("ICO has 65535 entries (at most 256)") && elapsed < 0.05)
        let bmp = try Self.hostile("bmp_height_int32_min.bin")
        #expect(decodeFailure { try BMPDecoder().decode(bmp, options: DecodeOptions()) } != nil)
    }
}
