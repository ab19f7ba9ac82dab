import KilnModel
import KilnPipeline

/// A cached result as an object of the shared result store, and back: the body is the encoded
/// result as served, the user metadata carry what an answer needs besides (so a hit is answered
/// without decoding, with the ETag the render had) and what proves the object is the one asked for.
///
/// | metadata | value |
/// | --- | --- |
/// | `kiln-key` | `CacheKey.sharedHex` of the variant |
/// | `kiln-version` | `CacheKey.formatVersion` |
/// | `kiln-digest` | the result's digest (its ETag, 32 hex digits) |
/// | `kiln-sha256` | SHA-256 of the body (64 hex digits) |
/// | `kiln-length` | the body's length in bytes |
/// | `kiln-format` or `kiln-document` | `jpeg`, `webp`…, or `json`, `blurhash`, `thumbhash` |
/// | `kiln-source-modified` | the source's modification time, seconds since the epoch (`Last-Modified`) |
///
/// Reading verifies everything: an object whose body length or SHA-256 does not match, that
/// names another key or format version, or lacks a field, is refused with a reason and never served.
enum SharedEntryCodec {
    /// The body, content type and metadata that store `image` for `key`.
    static func encode(_ image: CachedImage, for key: CacheKey) -> (body: [UInt8], contentType: String, metadata: [String: String]) {
        var metadata = [
            "kiln-key": key.sharedHex,
            "kiln-version": String(CacheKey.formatVersion),
            "kiln-digest": image.digest,
            "kiln-sha256": Digest.sha256Hex(image.data),
            "kiln-length": String(image.data.count),
            "kiln-source-modified": String(image.sourceModified),
        ]
        let contentType: String
        if let document = image.document {
            metadata["kiln-document"] = document.rawValue
            contentType = document.contentType
        } else if let format = image.format {
            metadata["kiln-format"] = format.rawValue
            contentType = format.mimeType
        } else {
            contentType = "application/octet-stream"
        }
        return (image.data, contentType, metadata)
    }

    /// The result `object` holds for `key`, or why it must not be served.
    static func decode(_ object: StoredObject, for key: CacheKey) -> Result<CachedImage, Refusal> {
        let m = object.metadata
        guard let version = m["kiln-version"], version == String(CacheKey.formatVersion) else {
            return .failure(Refusal("format version \(m["kiln-version"].map(quoted) ?? "missing"), not \(CacheKey.formatVersion)"))
        }
        guard m["kiln-key"] == key.sharedHex else { return .failure(Refusal("its kiln-key is not the variant's")) }
        guard let length = m["kiln-length"].flatMap({ Int($0) }), length == object.body.count else {
            return .failure(Refusal("body of \(object.body.count) bytes, kiln-length \(m["kiln-length"].map(quoted) ?? "missing")"))
        }
        guard let sha = m["kiln-sha256"], sha == Digest.sha256Hex(object.body) else {
            return .failure(Refusal("the body's SHA-256 does not match kiln-sha256"))
        }
        guard let digest = m["kiln-digest"], isHex(digest, count: 32) else {
            return .failure(Refusal("kiln-digest \(m["kiln-digest"].map(quoted) ?? "missing") is not 32 hex digits"))
        }
        guard let modified = m["kiln-source-modified"].flatMap({ Int64($0) }) else {
            return .failure(Refusal("kiln-source-modified missing or not a number"))
        }
        var format: ImageFormat?
        var document: DocumentKind?
        if let name = m["kiln-document"] {
            guard let kind = DocumentKind(rawValue: name) else { return .failure(Refusal("unknown kiln-document \(quoted(name))")) }
            document = kind
        } else if let name = m["kiln-format"] {
            guard let f = ImageFormat(rawValue: name) else { return .failure(Refusal("unknown kiln-format \(quoted(name))")) }
            format = f
        } else {
            return .failure(Refusal("neither kiln-format nor kiln-document"))
        }
        return .success(CachedImage(data: object.body, format: format, digest: digest, sourceModified: modified,
                                    sourcePath: key.sourcePath, document: document))
    }

    /// Why an object was refused: one line, values quoted and cut short.
    struct Refusal: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    static func isHex(_ text: String, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A metadata value for a log line: printable ASCII, at most 40 characters, quoted.
    static func quoted(_ value: String) -> String {
        let safe = value.unicodeScalars.prefix(40).map { $0.value >= 0x20 && $0.value < 0x7f ? Character($0) : "?" }
        return "'" + String(safe) + (value.unicodeScalars.count > 40 ? "…" : "") + "'"
    }
}
