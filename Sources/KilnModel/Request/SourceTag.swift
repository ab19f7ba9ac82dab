/// The stable name of one source (its path relative to the root, as in URLs), whatever its
/// version: what every tier that must forget a source at once groups its variants by.
///
/// - the surrogate-key headers of every answer (`Surrogate-Key`, `xkey`, `Cache-Tag`) carry
///   `headerValue`, so a CDN or Varnish purges every variant of the source with one tag;
/// - the shared result store keeps every variant of the source under one prefix
///   (`<prefix><hex>/`), which a purge lists and deletes;
/// - `kiln cache purge --source` derives the same tag and prefix from the path it is given.
///
/// Derived from the path alone (SHA-256, never `hashValue`), so every host, worker and command
/// computes the same tag; a hostile path cannot escape it (it is 32 hex digits).
public struct SourceTag: Sendable, Hashable, CustomStringConvertible {
    /// The first 32 hex digits (128 bits) of SHA-256("kiln-source\n" + path).
    public let hex: String

    /// - Parameter sourcePath: relative to the root, without a leading `/` (`photos/cat.jpg`,
    ///   `origin-a/cat.jpg` for a remote origin).
    public init(sourcePath: String) {
        hex = String(Digest.sha256Hex("kiln-source\n" + sourcePath).prefix(32))
    }

    /// The tag as surrogate-key headers carry it: `kiln-src-<hex>`.
    public var headerValue: String { "kiln-src-" + hex }

    public var description: String { headerValue }
}
