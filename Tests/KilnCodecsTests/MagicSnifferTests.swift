import KilnModel
@testable import KilnCodecs
import Testing

@Suite struct MagicSnifferTests {
    @Test func emptyBufferIsXEmpty() {
        let result = MagicSniffer().sniff([])
        #expect(result.mimeType == "application/x-empty")
        #expect(result.format == nil)
    }

    @Test func databaseLoads() throws {
        try MagicSniffer.checkDatabase()
        _ = try MagicSniffer.load()
    }

    @Test func databaseErrorNamesTheCause() {
        let error = MagicSniffer.DatabaseError(reason: "could not find any valid magic files!")
        #expect(error.description.hasPrefix("cannot load the libmagic database"))
        #expect(error.description.hasSuffix(": could not find any valid magic files!"))
    }

    @Test func knowsTheThreeFormatsAndNothingElse() throws {
        let sniffer = MagicSniffer()
        #expect(sniffer.sniff(try Corpus.data("pillow_hopper.jpg")).format == .jpeg)
        #expect(sniffer.sniff(try Corpus.data("skimage_coffee.png")).format == .png)
        #expect(sniffer.sniff(try Corpus.data("coffee_webp_named.png")).format == .webp)   // by content, not name
        #expect(sniffer.sniff(Array("hello, world\n".utf8)).mimeType == "text/plain")
    }

    /// A 64 KiB prefix tells the same as the whole file for every corpus file and bench image.
    @Test func prefixGivesTheSameAnswerAsTheWholeFile() throws {
        let prefix = MagicSniffer()
        let whole = MagicSniffer(maxBytes: Int.max)
        var files = try Corpus.entries.map { try Corpus.data($0.file) }
        files += try ["photo_4000x3000.jpg", "photo_1920x1080.webp", "alpha_1920x1080.png"].map(Corpus.benchData)
        #expect(files.count == 56)
        for data in files {
            #expect(prefix.sniff(data) == whole.sniff(data))
        }
    }

    @Test func onlyTheFirstBytesMatter() throws {
        var data = try Corpus.data("skimage_coffee.png")
        let sniffer = MagicSniffer(maxBytes: 4096)
        let before = sniffer.sniff(data)
        for i in 8192..<data.count { data[i] = 0x41 }
        #expect(sniffer.sniff(data) == before)
    }
}
