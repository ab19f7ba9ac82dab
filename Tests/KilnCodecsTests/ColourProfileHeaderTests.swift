import KilnModel
import Testing
@testable import KilnCodecs

/// `ImageHeader.hasColourProfile` from the header walks of the JPEG, PNG and WebP decoders (the
/// request cost uses it instead of scanning the bytes): true exactly for the corpus files whose
/// manifest names an embedded profile (`icc=`).
struct ColourProfileHeaderTests {
    static let stills = Corpus.entries {
        [.jpeg, .png, .webp].contains($0.format) && $0.decodeSize != nil && !$0.expected.contains("WARN")
    }

    @Test(arguments: stills)
    func headersSayWhetherAProfileIsEmbedded(_ entry: Corpus.Entry) throws {
        let decoder = try #require(corpusDecoder(for: entry))
        let header = try decoder.readHeader(try Corpus.data(entry.file))
        #expect(header.hasColourProfile == entry.detail.contains("icc="), "\(entry.file): \(entry.detail)")
    }

    @Test func theManifestHasFilesWithAndWithoutProfilesInEachFormat() {
        for format in [ImageFormat.jpeg, .png, .webp] {
            let rows = Self.stills.filter { $0.format == format }
            #expect(rows.contains { $0.detail.contains("icc=") }, "\(format)")
            #expect(rows.contains { !$0.detail.contains("icc=") }, "\(format)")
        }
    }
}
