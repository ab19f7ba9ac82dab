import Foundation
import Testing
import KilnModel
import KilnProcessing
@testable import KilnPipeline

/// Identity that checks itself (issue 35): the cache key must change whenever the bytes of an
/// answer change. The requests of `GoldenRequests` are rendered through the standard pipeline
/// (real decoders, processors and encoders, over copies of the shared corpus and benchmark files)
/// and the SHA-256 of each answer is compared with `Golden/digests.tsv`.
///
/// - A digest differs while `CacheKey.formatVersion` is the file's: the bytes changed under an
///   unchanged key, so caches everywhere would serve the old bytes as if they were the new ones.
///   Bump `CacheKey.formatVersion`, then regenerate.
/// - `CacheKey.formatVersion` is not the file's: regenerate (the file follows the version).
/// - `KILN_GOLDEN_UPDATE=1` rewrites the file instead of comparing.
///
/// The digests must not depend on the CPU: the resampler's portable and AVX2 paths give the same
/// bytes, and so do libjpeg-turbo with and without SIMD (`JSIMD_FORCENONE=1`). The test renders
/// with the kernel `KILN_DEBUG_RESAMPLER` names when it is set (`debug.resampler`), so each path
/// can be checked against the same file.
@Suite struct GoldenDigestTests {
    /// `<repository>/../shared`.
    static let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared")
    static let updating = ProcessInfo.processInfo.environment["KILN_GOLDEN_UPDATE"] == "1"

    /// A root holding a copy of every source the rows read, under `corpus/`, `bench/` and `golden/`.
    static func makeRoot() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-golden-\(UUID().uuidString)")
        let folders = ["corpus": shared.appendingPathComponent("corpus"), "bench": shared.appendingPathComponent("bench"),
                       "golden": GoldenDigestFile.folder]
        for source in GoldenRequests.sources {
            let parts = source.split(separator: "/", maxSplits: 1).map(String.init)
            let from = try #require(folders[parts[0]]).appendingPathComponent(parts[1])
            try #require(FileManager.default.fileExists(atPath: from.path),
                         "missing \(from.path) (shared/ must sit beside the repository)")
            let to = root.appendingPathComponent(source)
            try FileManager.default.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: from, to: to)
        }
        return root.path
    }

    /// The standard pipeline over `root`, with the watermark `logo` (a WebP with alpha).
    static func makeConfiguration(root: String) throws -> PipelineConfiguration {
        var source = SourceConfiguration()
        source.root = root
        let mark = shared.appendingPathComponent("corpus/pillow_transparent.webp").path
        return try PipelineConfiguration(source: source, watermarks: WatermarkConfiguration(paths: ["logo": mark]))
    }

    /// The digest of every row's answer, by row key.
    static func render() throws -> [String: String] {
        if let name = ProcessInfo.processInfo.environment["KILN_DEBUG_RESAMPLER"] {
            ResamplerKernel.processDefault = try #require(ResamplerKernel(rawValue: name), "KILN_DEBUG_RESAMPLER=\(name)")
        }
        let root = try makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let configuration = try makeConfiguration(root: root)
        let pipeline = try configuration.makePipeline()
        var digests: [String: String] = [:]
        for row in GoldenRequests.rows {
            let request = try configuration.parser.parse(row.path)
            do {
                let result = try pipeline.image(for: request, accepted: accepting(row.accept))
                digests[row.key] = Digest.sha256Hex(result.data)
            } catch {
                Issue.record("\(row) failed: \(error)")
            }
        }
        return digests
    }

    @Test func atLeastFortyRowsEachOnce() {
        #expect(GoldenRequests.rows.count >= 40)
        #expect(Set(GoldenRequests.rows.map(\.key)).count == GoldenRequests.rows.count, "a row is listed twice")
    }

    @Test func theFileRoundTripsAndNamesItsVersionFirst() throws {
        let rows = Array(GoldenRequests.rows.prefix(3))
        let file = GoldenDigestFile(version: 7, digests: Dictionary(uniqueKeysWithValues: rows.map { ($0.key, String(repeating: "a", count: 64)) }))
        let text = file.text(rows: rows)
        #expect(text.hasPrefix("# CacheKey.formatVersion 7 (regenerate: \(GoldenDigestFile.regenerate))\n"))
        #expect(try GoldenDigestFile(text: text) == file)
        #expect(throws: GoldenDigestFile.ReadError.self) { try GoldenDigestFile(text: "request\tsource\taccept\tsha256\n") }
        #expect(throws: GoldenDigestFile.ReadError.self) { try GoldenDigestFile(text: text + "w:1\ta.jpg\t-\tshort\n") }
    }

    @Test func outputBytesMatchTheGoldenDigests() throws {
        let rows = GoldenRequests.rows
        if Self.updating {
            let file = GoldenDigestFile(version: CacheKey.formatVersion, digests: try Self.render())
            try file.save(rows: rows)
            return
        }
        let file = try #require(try GoldenDigestFile.load(),
                                "no \(GoldenDigestFile.url.path): regenerate the golden digests with \(GoldenDigestFile.regenerate)")
        guard file.version == CacheKey.formatVersion else {
            Issue.record("""
                digests.tsv was made with CacheKey.formatVersion \(file.version), the code has \(CacheKey.formatVersion): \
                regenerate the golden digests with \(GoldenDigestFile.regenerate)
                """)
            return
        }
        let digests = try Self.render()
        let missing = rows.filter { file.digests[$0.key] == nil }
        let stale = Set(file.digests.keys).subtracting(rows.map(\.key))
        #expect(missing.isEmpty && stale.isEmpty, """
            the rows of digests.tsv are not GoldenRequests.rows (new: \(missing.map(\.description)), \
            gone: \(stale.sorted())): regenerate the golden digests with \(GoldenDigestFile.regenerate)
            """)
        let changed = rows.filter { row in
            guard let old = file.digests[row.key], let new = digests[row.key] else { return false }
            return old != new
        }
        #expect(changed.isEmpty, """
            output bytes changed: bump CacheKey.formatVersion and regenerate with \(GoldenDigestFile.regenerate)
            changed requests (\(changed.count) of \(rows.count)):
            \(changed.map { "  \($0)" }.joined(separator: "\n"))
            """)
    }
}
