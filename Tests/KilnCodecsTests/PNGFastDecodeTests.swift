import Testing
import KilnTestBytes
import KilnModel
@testable import KilnCodecs

/// The fast PNG decode path (libdeflate + Swift unfilter, issue 15) against libpng's: for every
/// file the fast path accepts, the same pixels; for every file, the same outcome of
/// `PNGDecoder` (pixels, or the same `DecodeError`) with and without the fast path.
@Suite struct PNGFastDecodeTests {
    /// A decode's result, comparable: the image, or the error it threw.
    enum Outcome: Equatable {
        case image(PixelBuffer)
        case failed(DecodeError)
    }

    static func outcome(_ data: [UInt8], fastPath: Bool) -> Outcome {
        data.withUnsafeBytes { bytes in
            do throws(DecodeError) {
                return .image(try PNGDecoder.decode(bytes, options: DecodeOptions(), fastPath: fastPath).buffer)
            } catch {
                return .failed(error)
            }
        }
    }

    /// The fast path's own result for `data`, nil when it declines.
    static func fast(_ data: [UInt8]) -> PixelBuffer? {
        data.withUnsafeBytes { bytes in
            guard let chunks = try? PNGChunks.scan(bytes) else { return nil }
            return PNGFastDecode.decode(bytes, chunks: chunks)
        }
    }

    /// Both decodes of `data` agree; returns whether the fast path took the file.
    @discardableResult
    static func expectSameOutcome(_ data: [UInt8], _ label: String) -> Bool {
        let withFast = outcome(data, fastPath: true), withoutFast = outcome(data, fastPath: false)
        #expect(withFast == withoutFast, "\(label)")
        guard let fastImage = fast(data) else { return false }
        #expect(Outcome.image(fastImage) == withoutFast, "\(label): the fast path's pixels differ from libpng's")
        return true
    }

    /// Pixels that give every filter something to do: a gradient plus a hashed noise term and a
    /// few flat runs, alpha varying (for RGBA).
    static func image(width: Int, height: Int, channels: Int) -> PixelBuffer {
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    let hash = (x &* 73_856_093) ^ (y &* 19_349_663) ^ (c &* 83_492_791)
                    let flat = (x / 5 + y / 3) % 4 == 0
                    let value = flat ? 200 : (x * 255 / max(1, width - 1) + y * 3 + (hash & 31) + c * 40)
                    pixels[(y * width + x) * channels + c] = UInt8(truncatingIfNeeded: value)
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: pixels)
    }

    static func encode(_ image: PixelBuffer, filter: PNGEncoder.Filter, progressive: Bool = false) throws -> [UInt8] {
        try PNGEncoder(filter: filter).encode(image, options: EncodeOptions(format: .png, progressive: progressive,
                                                                              pngCompressionLevel: 6))
    }

    @Test func corpusDecodesAsWithLibpng() throws {
        let pngs = Corpus.entries { $0.format == .png }
        #expect(!pngs.isEmpty, "the shared corpus has PNG rows")
        var taken = 0
        for entry in pngs {
            let data = try Corpus.data(entry.file)
            if Self.expectSameOutcome(data, entry.file) { taken += 1 }
        }
        // PngSuite's basn2c08 (8-bit RGB) and basn6a08 (8-bit RGBA) at least.
        #expect(taken >= 2, "the fast path took \(taken) corpus files")
    }

    @Test(arguments: [PNGEncoder.Filter.none, .sub, .up, .average, .paeth, .all])
    func everyFilterRoundTrips(_ filter: PNGEncoder.Filter) throws {
        for channels in [3, 4] {
            for (width, height) in [(1, 1), (1, 9), (9, 1), (2, 3), (33, 17), (64, 40)] {
                let source = Self.image(width: width, height: height, channels: channels)
                let data = try Self.encode(source, filter: filter)
                let label = "\(filter) \(width)x\(height)x\(channels)"
                #expect(Self.expectSameOutcome(data, label), "\(label): the fast path declined")
                #expect(Self.fast(data) == source, "\(label): not the encoded pixels")
            }
        }
    }

    /// Files whose rows all use one filter type, 0 to 4, filtered by the test itself (stored zlib
    /// blocks), so each unfilter kernel runs whatever the encoder would pick.
    @Test func everyFilterTypeByteUnfilters() throws {
        for channels in [3, 4] {
            let (width, height) = (21, 6)
            let source = Self.image(width: width, height: height, channels: channels)
            for type in 0...4 {
                let filtered = PNGTestFiles.filtered(source, type: UInt8(type))
                let data = TinyPNGWriter.png(width: width, height: height, colorType: channels == 4 ? 6 : 2,
                                             idat: TinyPNGWriter.zlibStored(filtered))
                let label = "filter type \(type), \(channels) channels"
                #expect(Self.expectSameOutcome(data, label), "\(label): the fast path declined")
                #expect(Self.fast(data) == source, "\(label)")
            }
        }
    }

    /// Paeth rows of RGBA are unfiltered two at a time (`PNGUnfilter.paethPair`): runs of Paeth
    /// rows of odd and even lengths between other types, the last row in a pair or alone, and
    /// widths from one pixel (no pairs) up.
    @Test func paethRowsInPairsAmongOtherTypes() throws {
        let patterns: [[UInt8]] = [[4, 4, 1, 4, 2, 4, 4, 4, 3, 0, 4], [4, 4, 4, 4], [0, 4, 4, 4], [2, 4, 4, 1, 4, 4]]
        for channels in [3, 4] {
            for width in [1, 2, 3, 17, 64] {
                for types in patterns {
                    let source = Self.image(width: width, height: types.count, channels: channels)
                    let data = TinyPNGWriter.png(width: width, height: types.count, colorType: channels == 4 ? 6 : 2,
                                                 idat: TinyPNGWriter.zlibStored(PNGTestFiles.filtered(source, types: types)))
                    let label = "rows \(types), \(width) wide, \(channels) channels"
                    #expect(Self.expectSameOutcome(data, label), "\(label): the fast path declined")
                    #expect(Self.fast(data) == source, "\(label)")
                }
            }
        }
    }

    @Test func idatSplitIntoManyChunks() throws {
        let source = Self.image(width: 40, height: 30, channels: 4)
        let data = PNGTestFiles.splitIDAT(try Self.encode(source, filter: .all), pieceSize: 97)
        #expect(Self.expectSameOutcome(data, "split IDAT"))
        #expect(Self.fast(data) == source)
    }

    @Test func filesOutsideTheFastPathDecline() throws {
        let rgb = Self.image(width: 8, height: 8, channels: 3)
        let samples = rgb.pixels.map(Int.init)
        let cases: [(String, [UInt8])] = [
            ("Adam7", try Self.encode(rgb, filter: .all, progressive: true)),
            ("gAMA 1.0", TinyPNGWriter.png(width: 8, height: 8, bitDepth: 8, colorType: 2, samples: samples, gamma: 100_000)),
            ("tRNS", TinyPNGWriter.png(width: 8, height: 8, bitDepth: 8, colorType: 2, samples: samples,
                                       transparency: [0, 0, 0, 0, 0, 0])),
            ("16-bit", TinyPNGWriter.png(width: 8, height: 8, bitDepth: 16, colorType: 2, samples: samples.map { $0 * 257 })),
            ("grey", TinyPNGWriter.png(width: 8, height: 8, bitDepth: 8, colorType: 0, samples: Array(samples[0..<64]))),
        ]
        for (label, data) in cases {
            #expect(Self.fast(data) == nil, "\(label)")
            Self.expectSameOutcome(data, label)
        }
        // gAMA 1/2.2 (sRGB's) stays on the fast path.
        let srgbGamma = TinyPNGWriter.png(width: 8, height: 8, bitDepth: 8, colorType: 2, samples: samples, gamma: 45455)
        #expect(Self.expectSameOutcome(srgbGamma, "gAMA 45455"))
    }

    /// Broken image data: the fast path declines and libpng's error (or libpng's tolerance) is
    /// what the decoder gives, with or without the fast path.
    @Test func brokenImageDataGivesLibpngsOutcome() throws {
        let source = Self.image(width: 33, height: 17, channels: 4)
        let data = try Self.encode(source, filter: .paeth)
        let idat = try #require(data.withUnsafeBytes { try? PNGChunks.scan($0).idatChunks?.first })
        // Every truncation from inside IHDR's end to the last byte.
        for length in stride(from: 33, to: data.count, by: 1) {
            Self.expectSameOutcome(Array(data[0..<length]), "truncated to \(length)")
        }
        // Flipped bytes in the compressed data, with the CRC left stale and with it fixed up.
        for offset in stride(from: idat.lowerBound + 8, to: idat.upperBound - 4, by: 7) {
            var stale = data
            stale[offset] ^= 0x5A
            #expect(Self.fast(stale) == nil, "stale CRC at \(offset)")
            Self.expectSameOutcome(stale, "flipped \(offset), stale CRC")
            Self.expectSameOutcome(PNGTestFiles.fixingCRCs(stale), "flipped \(offset), CRC fixed")
        }
        // A filter type byte of 5 in a valid zlib stream.
        var bad = PNGTestFiles.filtered(source, type: 4)
        bad[(source.width * 4 + 1) * 3] = 5
        let badFilter = TinyPNGWriter.png(width: 33, height: 17, colorType: 6, idat: TinyPNGWriter.zlibStored(bad))
        #expect(Self.fast(badFilter) == nil)
        #expect(Self.outcome(badFilter, fastPath: true) != .image(source))
        Self.expectSameOutcome(badFilter, "filter type 5")
        // Too little and too much image data in a valid zlib stream.
        let rows = PNGTestFiles.filtered(source, type: 1)
        for (label, payload) in [("short", Array(rows.dropLast(40))), ("long", rows + [0, 1, 2, 3, 4])] {
            let file = TinyPNGWriter.png(width: 33, height: 17, colorType: 6, idat: TinyPNGWriter.zlibStored(payload))
            #expect(Self.fast(file) == nil, "\(label)")
            Self.expectSameOutcome(file, "\(label) image data")
        }
    }
}
