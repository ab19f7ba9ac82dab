import Foundation
import KilnModel

/// The shared test corpus (`../shared/corpus` beside the repository) and its MANIFEST.tsv.
enum Corpus {
    /// One manifest row.
    struct Entry: Sendable, CustomStringConvertible {
        var file: String
        var family: String
        var mime: String
        var expected: String
        var detail: String
        var bytes: Int
        var description: String { file }

        /// W×H from a leading "DECODE WxH", nil for other expectations.
        var decodeSize: PixelSize? {
            guard expected.hasPrefix("DECODE ") else { return nil }
            let token = expected.dropFirst(7).prefix { $0 != " " && $0 != ";" }
            let parts = token.split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
            return PixelSize(width: w, height: h)
        }

        /// The format libmagic says the bytes are (nil for anything Kiln does not handle).
        var format: ImageFormat? { ImageFormat(mimeType: mime) }
    }

    /// `<repo>/../shared`, located from this file's path.
    static let sharedFolder: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // KilnCodecsTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()   // repository
        .deletingLastPathComponent()   // its parent
        .appendingPathComponent("shared")

    static let folder = sharedFolder.appendingPathComponent("corpus")

    /// Rows whose expectation MANIFEST.tsv (shared/, read-only) gives from before a format was
    /// decoded: BMP is an input since issue 38 (Tests/integration/test_manifest.py overrides the same row).
    static let overrides = ["pillow_hopper.bmp": "DECODE 128x128 (BMP input, issue 38)"]

    /// All manifest rows; empty when the corpus is missing (`CorpusManifestTests` then fails).
    static let entries: [Entry] = {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("MANIFEST.tsv"), encoding: .utf8) else {
            return []
        }
        var rows: [Entry] = []
        for line in text.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count >= 10 else { continue }
            rows.append(Entry(file: columns[0], family: columns[1], mime: columns[2], expected: overrides[columns[0]] ?? columns[5],
                              detail: columns[6], bytes: Int(columns[8]) ?? -1))
        }
        return rows
    }()

    static func entries(where predicate: (Entry) -> Bool) -> [Entry] { entries.filter(predicate) }

    static func entry(_ file: String) -> Entry? { entries.first { $0.file == file } }

    static func data(_ file: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(file)))
    }

    static func benchData(_ file: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: sharedFolder.appendingPathComponent("bench").appendingPathComponent(file)))
    }
}
