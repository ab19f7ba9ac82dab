import Foundation

/// A block of a checked-in file that a test generates from declarations (docs tables, the fuzz
/// dictionary): the lines between `<begin><marker>…` and `<end>…`. Tests compare it with what
/// the declarations give; `KILN_DOCS_UPDATE=1` rewrites it instead.
public enum GeneratedBlock {
    public static let updating = ProcessInfo.processInfo.environment["KILN_DOCS_UPDATE"] == "1"

    /// The repository's root (from this file's path).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The block's current text, or nil when `file` has no such block. While updating, the block
    /// is rewritten with `text` first (so the result is `text`).
    public static func sync(file: String, marker: String, text: String, begin: String = "<!-- generated: ",
                            end: String? = nil) throws -> String? {
        let url = root.appendingPathComponent(file)
        var lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        let endPrefix = end ?? "<!-- end generated: \(marker)"
        guard let start = lines.firstIndex(where: { $0.hasPrefix(begin + marker) }),
              let stop = lines[start...].firstIndex(where: { $0.hasPrefix(endPrefix) }) else { return nil }
        if updating {
            lines.replaceSubrange((start + 1)..<stop, with: text.components(separatedBy: "\n"))
            try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
            return text
        }
        return lines[(start + 1)..<stop].joined(separator: "\n")
    }
}
