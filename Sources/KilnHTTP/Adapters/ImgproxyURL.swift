import KilnModel

/// The parts of an imgproxy processing URL, before any option is read:
///
/// - `/<signature>/<options>/plain/<source URL>[@<extension>]` (the source percent-encoded where
///   it holds `@`, `?` or `%`), or
/// - `/<signature>/<options>/<base64url source URL>[.<extension>]` (the encoded URL may be split
///   by `/`), or `/<signature>/<options>/enc/…` (imgproxy Pro's encrypted sources, refused).
///
/// Options are the segments with a `:` (`rs:fill:300:200`); the source starts at the first
/// segment without one. A URL is imgproxy's only when its source says so: `plain`, `enc`, or a
/// base64url segment that decodes to a `local://`, `http(s)://`, `s3://`, `gs://`, `abs://` or
/// `swift://` URL. Anything else (`/<signature>/rs:300:200/cat.jpg`) is a native URL.
struct ImgproxyURL: Equatable {
    /// The first segment: the signature, or `insecure`/`unsafe`/anything when unsigned.
    var signature: String
    /// The raw path the signature covers: from the `/` after it to the end (no query).
    var signed: String
    /// The option segments, percent-decoded, in order.
    var options: [String]
    var source: Source
    /// The extension after `@` (plain) or `.` (base64), lowercased; nil without one.
    var fileExtension: String?

    enum Source: Equatable {
        /// The source URL after `plain/`, percent-decoded once (as imgproxy does).
        case plain(String)
        /// The decoded base64url source.
        case encoded(String)
        /// `enc/…`: an encrypted source.
        case encrypted
    }

    /// The schemes that mark a base64url segment as an imgproxy source.
    static let schemes = ["local://", "http://", "https://", "s3://", "gs://", "abs://", "swift://"]

    /// The URL's parts, nil when `path` is not imgproxy's; throws for an imgproxy URL that is
    /// broken (bad percent-encoding, an empty source).
    static func parse(_ path: String, adapter: String) throws(AdapterError) -> ImgproxyURL? {
        // Split on bytes, not Characters: a `/` or `:` followed by a combining mark is one
        // Character, and the signature covers bytes.
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        let segments = bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard segments.count >= 2 else { return nil }
        guard let start = segments.indices.dropFirst().first(where: { !segments[$0].utf8.contains(UInt8(ascii: ":")) }) else { return nil }
        let signature = segments[0]
        let signed = String(decoding: bytes.dropFirst(1 + signature.utf8.count), as: UTF8.self)
        var source: Source
        var ext: String?
        switch segments[start] {
        case "plain":
            var raw = segments[(start + 1)...].joined(separator: "/")
            if let at = raw.unicodeScalars.lastIndex(of: "@") {
                ext = raw[raw.unicodeScalars.index(after: at)...].lowercased()
                raw = String(raw[..<at])
            }
            guard !raw.isEmpty else { throw AdapterError(adapter, "no source URL after plain/") }
            do throws(SpecError) {
                source = .plain(try PathDecoding.decodeSegment(Substring(raw)))
            } catch {
                throw AdapterError(adapter, "the plain source has bad percent-encoding, a NUL or is not UTF-8")
            }
        case "enc":
            source = .encrypted
        default:
            var joined = segments[start...].joined()
            if let dot = joined.unicodeScalars.lastIndex(of: ".") {
                ext = joined[joined.unicodeScalars.index(after: dot)...].lowercased()
                joined = String(joined[..<dot])
            }
            let unpadded = joined.hasSuffix("=") ? String(joined.prefix { $0 != "=" }) : joined
            guard let bytes = Base64URL.decode(unpadded, canonical: false), let url = String(validating: bytes, as: UTF8.self),
                  schemes.contains(where: { url.lowercased().hasPrefix($0) }) else { return nil }
            source = .encoded(url)
        }
        var options: [String] = []
        for segment in segments[1..<start] {
            do throws(SpecError) {
                options.append(try PathDecoding.decodeSegment(Substring(segment)))
            } catch {
                throw AdapterError(adapter, "option '\(segment.prefix(40))' has bad percent-encoding, a NUL or is not UTF-8")
            }
        }
        return ImgproxyURL(signature: signature, signed: signed, options: options, source: source, fileExtension: ext)
    }

    /// The source as Kiln's source path: `local:///a/b.jpg` and a plain path are local files,
    /// `http(s)://` a configured origin (`AdaptedSource`); other schemes are refused.
    func sourcePath(origins: [AdapterOrigin], adapter: String) throws(AdapterError) -> String {
        let url: String
        switch source {
        case .encrypted: throw AdapterError(adapter, "encrypted sources (enc/, imgproxy Pro) are not supported; use plain/ or base64")
        case .plain(let u), .encoded(let u): url = u
        }
        let lower = url.prefix(10).lowercased()
        if lower.hasPrefix("local://") {
            let rest = url.dropFirst("local://".count)
            return try AdaptedSource.resolve(AdaptedSource.isRooted(rest) ? String(rest) : "/" + rest, origins: origins, adapter: adapter, what: "source")
        }
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            return try AdaptedSource.resolve(url, origins: origins, adapter: adapter, what: "source")
        }
        if let scheme = url.firstRange(of: "://") {
            throw AdapterError(adapter, "source scheme '\(url[..<scheme.lowerBound].prefix(10))' not supported: local:// paths and http(s) URLs of a configured origin only")
        }
        return try AdaptedSource.resolve(AdaptedSource.isRooted(url) ? url : "/" + url, origins: origins, adapter: adapter, what: "source")
    }
}
