import Foundation
@testable import KilnPipeline

/// `Golden/digests.tsv`: the SHA-256 of each golden request's answer, and the
/// `CacheKey.formatVersion` the digests were made with.
///
/// ```
/// # CacheKey.formatVersion 4 (regenerate: KILN_GOLDEN_UPDATE=1 swift test --filter GoldenDigest)
/// request<TAB>source<TAB>accept<TAB>sha256
/// w:200<TAB>bench/photo_4000x3000.jpg<TAB>-<TAB>9f86d0…
/// ```
///
/// `accept` is `-` for a request without an `Accept` header. Rows are in the order of
/// `GoldenRequests.rows`.
struct GoldenDigestFile: Equatable {
    /// The `CacheKey.formatVersion` of the first line.
    var version: Int
    /// Digest by row key (`GoldenRequests.Row.key`: request, source and accept, tab-separated).
    var digests: [String: String]

    static let header = "request\tsource\taccept\tsha256"
    static let versionPrefix = "# CacheKey.formatVersion "
    static let regenerate = "KILN_GOLDEN_UPDATE=1 swift test --filter GoldenDigest"

    /// `Tests/KilnPipelineTests/Golden`, found from this file's path.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let url = folder.appendingPathComponent("digests.tsv")

    enum ReadError: Error, CustomStringConvertible {
        case malformed(line: Int, String)
        var description: String {
            switch self {
            case .malformed(let line, let text): "digests.tsv line \(line): \(text)"
            }
        }
    }

    init(version: Int, digests: [String: String]) {
        self.version = version
        self.digests = digests
    }

    /// Parses the file's text.
    init(text: String) throws(ReadError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard let first = lines.first, first.hasPrefix(Self.versionPrefix),
              let version = Int(first.dropFirst(Self.versionPrefix.count).prefix { $0.isNumber }) else {
            throw .malformed(line: 1, "expected \"\(Self.versionPrefix)<n>\"")
        }
        guard lines.count >= 2, lines[1] == Self.header else { throw .malformed(line: 2, "expected the header \(Self.header)") }
        var digests: [String: String] = [:]
        for (index, line) in lines.enumerated().dropFirst(2) {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count == 4, columns[3].count == 64 else {
                throw .malformed(line: index + 1, "expected request, source, accept and a SHA-256")
            }
            digests[columns[0...2].joined(separator: "\t")] = String(columns[3])
        }
        self.version = version
        self.digests = digests
    }

    /// The file's text, rows in the order of `rows`.
    func text(rows: [GoldenRequests.Row]) -> String {
        var out = "\(Self.versionPrefix)\(version) (regenerate: \(Self.regenerate))\n\(Self.header)\n"
        for row in rows {
            out += "\(row.key)\t\(digests[row.key] ?? "")\n"
        }
        return out
    }

    /// The file on disk, nil when there is none.
    static func load() throws -> GoldenDigestFile? {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        return try GoldenDigestFile(text: text)
    }

    func save(rows: [GoldenRequests.Row]) throws {
        try Data(text(rows: rows).utf8).write(to: Self.url, options: .atomic)
    }
}
