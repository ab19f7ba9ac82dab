import Foundation
import KilnModel
import KilnCodecs
import Testing

/// Every row of /work/shared/corpus/MANIFEST.tsv, by its expected behaviour.
@Suite struct CorpusManifestTests {
    @Test func corpusIsPresentAndComplete() throws {
        // A missing corpus must fail, not skip: every parameterised test below would have no rows.
        #expect(Corpus.entries.count == 53, "MANIFEST.tsv not found or incomplete at \(Corpus.folder.path)")
        for entry in Corpus.entries {
            #expect(try Corpus.data(entry.file).count == entry.bytes, "\(entry.file) differs from the manifest")
        }
        #expect(Corpus.entries.filter { $0.decodeSize != nil && $0.format != nil }.count >= 30)
    }

    @Test(arguments: Corpus.entries(where: { $0.decodeSize != nil && $0.format != nil }))
    func decodesToStoredSize(_ entry: Corpus.Entry) throws {
        let data = try Corpus.data(entry.file)
        let decoder = try #require(corpusDecoder(for: entry))
        let expected = try #require(entry.decodeSize)
        let header = try decoder.readHeader(data)
        #expect(header.size == expected)
        let image = try decoder.decode(data, options: DecodeOptions())
        #expect(image.buffer.size == expected)
        #expect(image.header.size == expected)
        #expect(image.buffer.channels == (header.hasAlpha ? 4 : 3))
        #expect(image.buffer.pixels.count == expected.pixelCount * image.buffer.channels)
    }

    @Test(arguments: Corpus.entries(where: { $0.expected.hasPrefix("REJECT-CORRUPT") || $0.expected.hasPrefix("CORRUPT-WARN") }))
    func refusesCorruptFiles(_ entry: Corpus.Entry) throws {
        let data = try Corpus.data(entry.file)
        let decoder = try #require(corpusDecoder(for: entry), "\(entry.file): libmagic type \(entry.mime) has no decoder")
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try decoder.decode(data, options: DecodeOptions()) } }
        let failure = try #require(error, "\(entry.file) decoded, expected a corrupt error")
        #expect(failure.isCorrupt, "\(entry.file): \(failure)")
        #expect(!failure.message.isEmpty && !failure.message.contains("\n"))
        #expect(elapsed < 2, "\(entry.file) took \(elapsed) s to refuse")   // the scan bomb must not hang
    }

    @Test(arguments: Corpus.entries(where: { $0.expected.hasPrefix("REJECT-LIMIT") }))
    func refusesOverLimitFilesFromTheHeader(_ entry: Corpus.Entry) throws {
        let data = try Corpus.data(entry.file)
        let decoder = try #require(corpusDecoder(for: entry))
        let limits = DecodeLimits()   // 50 MP, 50 MP of animation
        let header = try decoder.readHeader(data)
        let headerError = decodeFailure { try limits.check(header) }
        #expect(headerError?.isOverLimit == true, "\(entry.file): header \(header.size) x \(header.frameCount) passed the limits")
        var error: DecodeError?
        let elapsed = seconds { error = decodeFailure { try decoder.decode(data, options: DecodeOptions(limits: limits)) } }
        #expect(error == headerError, "\(entry.file): decode must fail with the header check's error")
        // Refused before any pixel work: far quicker than decoding even one frame would be.
        #expect(elapsed < 0.2, "\(entry.file) took \(elapsed) s to refuse")
    }

    // MANIFEST.tsv (read-only) still says REJECT-TYPE for types Kiln reads since: GIF (issue 12),
    // SVG (issue 38, sniffed since a2ecda8; its row's expectation is the SVG decoder's to settle).
    // BMP's row is overridden (`Corpus.overrides`).
    @Test(arguments: Corpus.entries(where: { $0.expected.hasPrefix("REJECT-TYPE") && $0.format == nil }))
    func sniffsUnsupportedTypesAsNonImages(_ entry: Corpus.Entry) throws {
        let result = MagicSniffer().sniff(try Corpus.data(entry.file))
        #expect(result.format == nil, "\(entry.file) sniffed as \(result.mimeType)")
        #expect(result.mimeType == entry.mime)
    }

    @Test func snifferAgreesWithLibmagicColumn() throws {
        let sniffer = MagicSniffer()
        for entry in Corpus.entries {
            let result = sniffer.sniff(try Corpus.data(entry.file))
            #expect(result.mimeType == entry.mime, "\(entry.file)")
        }
    }
}
