import KilnModel

/// imgproxy's processing URLs (`ImgproxyURL`): `/<signature>/rs:fill:300:200/g:sm/plain/local:///photos/cat.jpg@webp`
/// or `/<signature>/w:300/<base64url of the source URL>.webp`, with imgproxy's option names and
/// argument orders (`ImgproxyOptions`), answered as the native twin (`/rs:300:200:fill/g:smart/f:webp/-/photos/cat.jpg`).
///
/// Signatures are imgproxy's: base64url(HMAC-SHA256(key, salt + the path after the signature)),
/// truncated to `adapters.imgproxy_signature_size` bytes, any of `adapters.imgproxy_keys`;
/// Kiln's own URL signature is the same algorithm (`URLSignature`). Without keys the first
/// segment may be anything (`insecure`, `_`), as in imgproxy.
///
/// Sources: `local:///path` and plain paths are files under `source.root`; `http(s)://` URLs only
/// under a configured origin (`source.origins`); any other URL is a 400 and is never fetched.
public struct ImgproxyAdapter: URLAdapter {
    public let name = "imgproxy"
    public var signature: URLSignature?
    public var origins: [AdapterOrigin]
    /// The `[watermarks]` entry imgproxy's `wm:` draws; nil: `wm:` is refused.
    public var watermark: String?

    public init(signature: URLSignature? = nil, origins: [AdapterOrigin] = [], watermark: String? = nil) {
        self.signature = signature
        self.origins = origins
        self.watermark = watermark
    }

    /// imgproxy's options and the Kiln options each becomes (`AdapterParameter`): the first name
    /// is imgproxy's long one, the aliases its short ones.
    public static let parameters: [AdapterParameter] = [
        .init("resize", aliases: ["rs"], options: ["resize", "enlarge", "extend"]),
        .init("size", aliases: ["s"], options: ["resize", "enlarge", "extend"]),
        .init("resizing_type", aliases: ["rt"], options: ["resize"]),
        .init("width", aliases: ["w"], options: ["resize"]),
        .init("height", aliases: ["h"], options: ["resize"]),
        .init("enlarge", aliases: ["el"], options: ["enlarge"]),
        .init("dpr", options: ["dpr"]),
        .init("gravity", aliases: ["g"], options: ["gravity"]),
        .init("crop", aliases: ["c"], options: ["crop"]),
        .init("trim", aliases: ["t"], options: ["trim"]),
        .init("padding", aliases: ["pd"], options: ["pad"]),
        .init("rotate", aliases: ["rot"], options: ["rotate"]),
        .init("flip", aliases: ["fl"], options: ["flip"]),
        .init("quality", aliases: ["q"], options: ["quality"]),
        .init("format_quality", aliases: ["fq"], options: ["format_quality"]),
        .init("max_bytes", aliases: ["mb"], options: ["max_bytes"]),
        .init("background", aliases: ["bg"], options: ["background"]),
        .init("blur", aliases: ["bl"], options: ["blur"]),
        .init("sharpen", aliases: ["sh"], options: ["sharpen"]),
        .init("watermark", aliases: ["wm"], options: ["watermark"]),
        .init("strip_metadata", aliases: ["sm"], options: ["strip"]),
        .init("keep_copyright", aliases: ["kcr"], options: ["strip"]),
        .init("strip_color_profile", aliases: ["scp"], options: ["icc"]),
        .init("auto_rotate", aliases: ["ar"], options: ["autorotate"]),
        .init("filename", aliases: ["fn"], options: ["filename"]),
        .init("return_attachment", aliases: ["att"], options: ["attachment"]),
        .init("expires", aliases: ["exp"], options: ["expires"]),
        .init("cachebuster", aliases: ["cb"], options: ["cachebuster"]),
        .init("preset", aliases: ["pr"], options: ["preset"]),
        .init("format", aliases: ["f", "ext"], options: ["format"]),
        .init("page", aliases: ["pg"], options: ["page"]),
        .init("extend", aliases: ["ex"], options: ["extend"]),
        .init("extend_aspect_ratio", aliases: ["exar", "extend_ar"], refused: "Kiln extends to a box (extend), not to an aspect ratio"),
        .init("min-width", aliases: ["mw"], refused: "Kiln's sizes are boxes; a minimum side would need the source's size in the URL's meaning"),
        .init("min-height", aliases: ["mh"], refused: "Kiln's sizes are boxes; a minimum side would need the source's size in the URL's meaning"),
        .init("zoom", aliases: ["z"], refused: "write the zoomed size with rs: or w:/h: and dpr:"),
        .init("pixelate", aliases: ["pix"], refused: "Kiln has no pixelate filter"),
        .init("skip_processing", aliases: ["skp"], refused: "Kiln always decodes and re-encodes (that is what validates a source)"),
        .init("raw", refused: "Kiln always decodes and re-encodes (that is what validates a source)"),
    ]

    static let aliases = parameters.aliasTable
    static let known = parameters.accepted
    static let refused = parameters.refusals

    public func adapt(path: String, query: String?) throws(AdapterError) -> AdaptedURL? {
        guard let url = try ImgproxyURL.parse(path, adapter: name) else { return nil }
        if let query, !query.isEmpty { throw AdapterError(name, "a query string is not part of imgproxy's URL format") }
        let signing = try check(url)
        var translation = ImgproxyOptions(adapter: name, watermark: watermark)
        for segment in url.options {
            let parts = segment.unicodeScalars.split(separator: ":", omittingEmptySubsequences: false).map { String(Substring($0)) }
            let canonical = ImgproxyAdapter.aliases[parts[0]] ?? parts[0]
            if let reason = ImgproxyAdapter.refused[canonical] {
                throw AdapterError(name, "not supported: '\(parts[0].prefix(30))' (\(reason))")
            }
            guard ImgproxyAdapter.known.contains(canonical) else { throw AdapterError.unsupported(name, [String(parts[0].prefix(40))]) }
            try translation.read(canonical, Array(parts.dropFirst()))
        }
        if let ext = url.fileExtension { try translation.read("format", [ext], fromExtension: true) }
        let source = try url.sourcePath(origins: origins, adapter: name)
        return AdaptedURL(adapter: name, options: try translation.nativeOptions(), sourcePath: source, signing: signing)
    }

    /// The signature segment checked with imgproxy's keys; without keys anything goes there.
    func check(_ url: ImgproxyURL) throws(AdapterError) -> AdaptedURL.Signing {
        guard let signature else { return .unsigned }
        if ["insecure", "unsafe", "_"].contains(url.signature) { return .unsignedWhileKeyed }
        do throws(SignatureError) {
            let verified = try signature.verify(rawPath: "/" + url.signature + url.signed)
            return verified.kind == .signed ? .verified : .unsignedWhileKeyed
        } catch {
            throw AdapterError.badSignature(name, error == .malformed ? "malformed signature (URL-safe base64 of \(signature.size) bytes expected)" : "invalid signature for this URL")
        }
    }
}
