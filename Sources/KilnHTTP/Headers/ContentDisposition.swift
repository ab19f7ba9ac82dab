import KilnModel

/// `Content-Disposition` of an image answer (RFC 6266): `inline`, or `attachment` with
/// `attachment:1`, and a file name: the URL's `filename:` or the source's base name, with the
/// output format's extension in place of its own.
///
/// The name is sanitised before it goes near the header: control characters (C0, DEL, C1),
/// Unicode format and separator characters (bidi overrides, zero-width, U+2028/2029), quotes,
/// backslashes, path separators (`/`, `\`) and `:;<>|?*` become `_` or are dropped; leading dots
/// and spaces go (no hidden or `..` names); the stem keeps at most `maxStemCharacters`
/// characters; an empty stem becomes `image`. It is then written twice: `filename="…"`, ASCII
/// only (other characters as `_`), for old clients, and `filename*=UTF-8''…` (RFC 8187
/// percent-encoding) when the name is not plain ASCII. Neither form can end the header or add
/// a parameter.
public enum ContentDisposition {
    /// Characters of the stem kept (the extension comes on top).
    public static let maxStemCharacters = 100

    /// The header value for `request` answered in `format` (nil: keep the name's own extension).
    public static func value(for request: ImageRequest, format: ImageFormat?) -> String {
        let raw = request.download.filename ?? baseName(of: request.sourcePath)
        // Documents (`f:json`, `f:blurhash`, `f:thumbhash`) have no image format: `.json`, `.txt`.
        let ext = format.map(fileExtension) ?? request.output.document.map { $0 == .json ? "json" : "txt" }
        let name = fileName(stem: stem(of: raw), extension: ext)
        return header(name: name, attachment: request.download.attachment)
    }

    /// `inline; filename="a.jpg"` (plus `filename*=` for a non-ASCII name).
    static func header(name: String, attachment: Bool) -> String {
        var value = (attachment ? "attachment" : "inline") + "; filename=\"" + asciiFallback(name) + "\""
        if !name.unicodeScalars.allSatisfy({ $0.isASCII }) {
            value += "; filename*=UTF-8''" + percentEncoded(name)
        }
        return value
    }

    /// The last segment of a source path.
    static func baseName(of path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    /// The name without its extension (1 to 5 letters or digits after the last dot, when that
    /// dot is not the first character), sanitised and cut to `maxStemCharacters`.
    static func stem(of raw: String) -> String {
        var scalars: [Unicode.Scalar] = []
        for s in raw.unicodeScalars {
            if let kept = sanitised(s) { scalars.append(kept) }
        }
        var text = String(String.UnicodeScalarView(scalars))
        if let dot = text.lastIndex(of: "."), dot != text.startIndex {
            let ext = text[text.index(after: dot)...]
            if (1...5).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                text = String(text[..<dot])
            }
        }
        // No hidden files, no `..`, no leading or trailing spaces.
        while let first = text.first, first == "." || first == " " { text.removeFirst() }
        while let last = text.last, last == "." || last == " " { text.removeLast() }
        if text.count > maxStemCharacters { text = String(text.prefix(maxStemCharacters)) }
        return text.isEmpty ? "image" : text
    }

    static func fileName(stem: String, extension ext: String?) -> String {
        ext.map { stem + "." + $0 } ?? stem
    }

    /// What a character of a name becomes: nil (dropped) for invisible controls and format
    /// characters, `_` for characters that mean something in a header or a path.
    static func sanitised(_ s: Unicode.Scalar) -> Unicode.Scalar? {
        switch s.value {
        case 0..<0x20, 0x7F, 0x80..<0xA0: return nil
        default: break
        }
        switch s.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .control, .surrogate, .privateUse, .unassigned: return nil
        default: break
        }
        if "\"\\/:;<>|?*%".unicodeScalars.contains(s) { return "_" }
        return s
    }

    /// ASCII only: every other character as `_` (the name is already free of quotes and controls).
    static func asciiFallback(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { $0.isASCII ? $0 : "_" }))
    }

    /// RFC 8187 `value-chars`: attr-chars as they are, every other byte of the UTF-8 as `%XX`.
    static func percentEncoded(_ name: String) -> String {
        PercentEncoding.encode(name, keeping: .attrChar)
    }

    /// The usual extension of a format: `jpg` for JPEG.
    static func fileExtension(_ format: ImageFormat) -> String {
        format == .jpeg ? "jpg" : format.rawValue
    }
}
