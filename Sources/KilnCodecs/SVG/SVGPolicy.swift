import KilnModel

/// What the SVG sanitiser keeps: the elements that draw, the attributes that style them, and
/// references only inside the document.
///
/// - Elements: an allow-list of SVG's drawing, structure, paint-server, clipping, text and
///   filter elements. Everything else is dropped with its subtree: `script`, `foreignObject`,
///   `iframe`, `animate`/`set` (which could rewrite a reference), and any element with a
///   namespace prefix (Inkscape's and Sodipodi's editor data, `html:`).
/// - Attributes: event handlers (`on*`), `xml:base`, namespace declarations and every
///   prefixed attribute but `xlink:href`, `xml:space` and `xml:lang` are dropped.
/// - References: `href` and `xlink:href` are kept when they point inside the document (`#id`),
///   and on `image` when they are a base64 `data:` PNG, JPEG, GIF or WebP (checked by
///   `SVGSanitizer`); an attribute whose value has a `url(...)` leaving the document is dropped.
/// - CSS (`style` attributes and `<style>` elements): `@import` rules are removed and every
///   `url(...)` leaving the document becomes `none`.
enum SVGPolicy {
    static let elements: Set<String> = [
        "svg", "g", "defs", "desc", "title", "symbol", "use", "image", "switch", "a", "view",
        "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
        "text", "tspan", "textPath",
        "linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask", "marker", "style",
        "filter", "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix",
        "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood", "feFuncA", "feFuncB",
        "feFuncG", "feFuncR", "feGaussianBlur", "feImage", "feMerge", "feMergeNode", "feMorphology", "feOffset",
        "fePointLight", "feSpecularLighting", "feSpotLight", "feTile", "feTurbulence",
    ]

    /// Elements whose character data is content (everything else's is dropped).
    static let textElements: Set<String> = ["text", "tspan", "textPath", "title", "desc", "style"]

    /// The element's name without an `svg:` prefix; nil for any other prefix (dropped).
    static func localName(_ name: String) -> String? {
        guard let colon = name.firstIndex(of: ":") else { return name }
        return name[..<colon] == "svg" ? String(name[name.index(after: colon)...]) : nil
    }

    enum AttributeRule: Equatable {
        case keep
        case drop
        /// A reference: kept only inside the document (or a checked `data:` image).
        case reference
    }

    static func rule(for name: String) -> AttributeRule {
        let lower = name.lowercased()
        if lower.hasPrefix("on") { return .drop }
        if lower == "href" || lower == "xlink:href" { return .reference }
        if lower == "xml:space" || lower == "xml:lang" { return .keep }
        if lower.contains(":") || lower == "xmlns" { return .drop }
        return .keep
    }

    /// True when `value` is a reference inside the document (`#id`).
    static func isFragment(_ value: String) -> Bool {
        value.trimmingASCIIWhitespace().hasPrefix("#")
    }

    /// The id a fragment reference names (`#a` → `a`).
    static func fragmentID(_ value: String) -> String? {
        let trimmed = value.trimmingASCIIWhitespace()
        guard trimmed.hasPrefix("#"), trimmed.count > 1 else { return nil }
        return String(trimmed.dropFirst())
    }

    /// True when `value` has a `url(...)` that leaves the document.
    static func hasExternalURL(_ value: String) -> Bool {
        urlTargets(value).contains { !$0.hasPrefix("#") }
    }

    /// The fragment ids `url(#id)` references in `value` name.
    static func urlFragments(_ value: String) -> [String] {
        urlTargets(value).compactMap { $0.hasPrefix("#") && $0.count > 1 ? String($0.dropFirst()) : nil }
    }

    /// CSS with `@import` rules removed and every `url(...)` leaving the document made `none`.
    static func cleanCSS(_ css: String) -> String {
        let bytes = Array(css.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if hasPrefix(bytes, at: i, "@import") {
                i = (bytes[i...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count - 1) + 1
                continue
            }
            if hasPrefix(bytes, at: i, "url(") {
                guard let close = bytes[(i + 4)...].firstIndex(of: UInt8(ascii: ")")) else { break }
                let target = unquote(bytes[(i + 4)..<close])
                out += target.hasPrefix("#") ? Array("url(\(target))".utf8) : Array("none".utf8)
                i = close + 1
                continue
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func urlTargets(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        var targets: [String] = []
        var i = 0
        while i < bytes.count {
            guard hasPrefix(bytes, at: i, "url(") else { i += 1; continue }
            guard let close = bytes[(i + 4)...].firstIndex(of: UInt8(ascii: ")")) else {
                targets.append(String(decoding: bytes[(i + 4)...], as: UTF8.self))   // unclosed: leaves the document
                break
            }
            targets.append(unquote(bytes[(i + 4)..<close]))
            i = close + 1
        }
        return targets
    }

    private static func unquote(_ raw: ArraySlice<UInt8>) -> String {
        var s = String(decoding: raw, as: UTF8.self).trimmingASCIIWhitespace()
        if let first = s.first, first == "\"" || first == "'", s.count >= 2, s.last == first {
            s = String(s.dropFirst().dropLast()).trimmingASCIIWhitespace()
        }
        return s
    }

    /// True when `bytes` at `i` start with the ASCII `prefix`, ignoring case.
    private static func hasPrefix(_ bytes: [UInt8], at i: Int, _ prefix: String) -> Bool {
        let p = prefix.utf8
        guard i + p.count <= bytes.count else { return false }
        return zip(bytes[i...], p).allSatisfy { c, expected in
            (c >= 65 && c <= 90 ? c + 32 : c) == expected
        }
    }
}
