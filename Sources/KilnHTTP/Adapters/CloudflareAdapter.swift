/// Cloudflare Image Resizing URLs: `/cdn-cgi/image/<k=v,k=v…>/<source>`, the source a path on
/// this server or an absolute URL under a configured origin (`AdaptedSource`).
///
/// | Cloudflare | Kiln |
/// | --- | --- |
/// | `width`/`w`, `height`/`h` | `w:`, `h:`, or `rs:<w>:<h>:<mode>` with both |
/// | `fit=scale-down` (and no `fit`) | `fit`, never enlarged |
/// | `fit=contain` | `fit` + `el:1` |
/// | `fit=cover` | `fill` + `el:1` |
/// | `fit=crop` | `fill` (never enlarged) |
/// | `gravity=auto`, `left`/`right`/`top`/`bottom`/`center`, `XxY` | `g:smart`, `g:west`…, `g:fp:X:Y` |
/// | `quality`/`q` | `q:` |
/// | `format`/`f` = `auto`, `avif`, `webp`, `jpeg`, `png`, `json`; `baseline-jpeg` | `f:…`; `f:jpeg` + `pg:0` |
/// | `dpr` | `dpr:` |
/// | `blur` (radius 1–250) | `bl:<radius ÷ 2>` (a Gaussian's sigma) |
/// | `sharpen` (0–10) | `sh:` |
/// | `background` (`#rgb`, `#rrggbb`) | `bg:` |
/// | `rotate` (0, 90, 180, 270) | `rot:` |
/// | `flip` (`h`, `v`, `hv`) | `flip:` |
/// | `metadata=keep` / `copyright` / `none` | `strip:0` / `strip:copyright` / `strip:1` |
///
/// Not supported (400 naming them): `fit=pad`, `trim` (pixel counts; Kiln's `t:` trims by colour),
/// `gravity=face`, CSS
/// colour names and functions, and every other option (`anim`, `onerror`, `brightness`, …).
public struct CloudflareAdapter: URLAdapter {
    public static let prefix = "/cdn-cgi/image/"
    public let name = "cloudflare"
    public var origins: [AdapterOrigin]

    public init(origins: [AdapterOrigin] = []) {
        self.origins = origins
    }

    /// Cloudflare's options and the Kiln options each becomes (`AdapterParameter`).
    public static let parameters: [AdapterParameter] = [
        .init("width", aliases: ["w"], options: ["width", "resize", "enlarge"]),
        .init("height", aliases: ["h"], options: ["height", "resize", "enlarge"]),
        .init("fit", options: ["resize", "enlarge"]),
        .init("gravity", options: ["gravity"]),
        .init("quality", aliases: ["q"], options: ["quality"]),
        .init("format", aliases: ["f"], options: ["format", "progressive"]),
        .init("dpr", options: ["dpr"]),
        .init("blur", options: ["blur"]),
        .init("sharpen", options: ["sharpen"]),
        .init("background", options: ["background"]),
        .init("rotate", options: ["rotate"]),
        .init("flip", options: ["flip"]),
        .init("metadata", options: ["strip"]),
        .init("trim", refused: "Cloudflare's trim cuts fixed pixel counts; Kiln's trim (t:) cuts uniform borders by colour, "
                + "on native URLs"),
    ]

    static let aliases = parameters.aliasTable
    static let known = parameters.accepted
    static let notSupported = parameters.refusals

    public func adapt(path: String, query: String?) throws(AdapterError) -> AdaptedURL? {
        guard path.hasPrefix(CloudflareAdapter.prefix) else { return nil }
        if let query, !query.isEmpty { throw AdapterError(name, "a query string is not part of Cloudflare's URL format") }
        let rest = path.dropFirst(CloudflareAdapter.prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { throw AdapterError(name, "no source after the options") }
        let raw = try QueryParameters.decode(rest[..<slash], adapter: name)
        let pairs = try QueryParameters(raw, adapter: name, separator: ",")
        var p: [String: String] = [:]
        for key in pairs.names {
            let canonical = CloudflareAdapter.aliases[key] ?? key
            guard p[canonical] == nil else { throw AdapterError(name, "option '\(canonical)' given twice") }
            p[canonical] = pairs[key]
        }
        if let first = pairs.names.first(where: { CloudflareAdapter.notSupported[$0] != nil }) {
            throw AdapterError(name, "not supported: '\(first)' (\(CloudflareAdapter.notSupported[first]!))")
        }
        let unknown = pairs.names.filter { !CloudflareAdapter.known.contains(CloudflareAdapter.aliases[$0] ?? $0) }
        guard unknown.isEmpty else { throw AdapterError.unsupported(name, unknown) }
        guard !p.isEmpty else { throw AdapterError(name, "at least one option is needed") }

        var options = try sizeOptions(p)
        if let g = p["gravity"] { options.append("g:\(try gravity(g))") }
        if let q = p["quality"] { options.append("q:\(try AdaptedSource.integer(q, "quality", 1...100, adapter: name))") }
        if let f = p["format"] {
            switch f {
            case "auto", "avif", "webp", "jpeg", "png", "json": options.append("f:\(f)")
            case "baseline-jpeg": options += ["f:jpeg", "pg:0"]
            default: throw AdapterError(name, "format=\(f.prefix(20)) not supported (auto, avif, webp, jpeg, baseline-jpeg, png or json)")
            }
        }
        if let d = p["dpr"] { options.append("dpr:\(try AdaptedSource.decimal(d, "dpr", 1...4, adapter: name))") }
        if let b = p["blur"] {
            let radius = try AdaptedSource.integer(b, "blur", 0...250, adapter: name)
            if radius > 0 { options.append("bl:\(AdaptedSource.formatted(Double(radius) / 2))") }
        }
        if let s = p["sharpen"] { options.append("sh:\(try AdaptedSource.decimal(s, "sharpen", 0...10, adapter: name))") }
        if let bg = p["background"] {
            guard let hex = AdaptedSource.hexColor(bg) else {
                throw AdapterError(name, "background=\(bg.prefix(20)) not supported: Kiln takes #rgb or #rrggbb")
            }
            options.append("bg:\(hex)")
        }
        if let r = p["rotate"] {
            guard ["0", "90", "180", "270"].contains(r) else { throw AdapterError(name, "rotate=\(r.prefix(20)) must be 0, 90, 180 or 270") }
            options.append("rot:\(r)")
        }
        if let f = p["flip"] {
            guard ["h", "v", "hv"].contains(f) else { throw AdapterError(name, "flip=\(f.prefix(20)) must be h, v or hv") }
            options.append("flip:\(f)")
        }
        if let m = p["metadata"] {
            switch m {
            case "keep": options.append("strip:0")
            case "none": options.append("strip:1")
            case "copyright": options.append("strip:copyright")
            default: throw AdapterError(name, "metadata=\(m.prefix(20)) must be keep, copyright or none")
            }
        }
        let rawSource = rest[rest.index(after: slash)...]
        let lower = rawSource.prefix(8).lowercased()
        let reference = lower.hasPrefix("http:") || lower.hasPrefix("https:") ? String(rawSource) : "/" + rawSource
        let source = try AdaptedSource.resolve(reference, origins: origins, adapter: name, what: "source")
        return AdaptedURL(adapter: name, options: options, sourcePath: source)
    }

    /// `width`, `height` and `fit` as one resize.
    func sizeOptions(_ p: [String: String]) throws(AdapterError) -> [String] {
        let w = try p["width"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "width", 1...65_535, adapter: name) }
        let h = try p["height"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "height", 1...65_535, adapter: name) }
        let fit = p["fit"] ?? "scale-down"
        let (mode, enlarge): (String, Bool)
        switch fit {
        case "scale-down": (mode, enlarge) = ("fit", false)
        case "contain": (mode, enlarge) = ("fit", true)
        case "cover": (mode, enlarge) = ("fill", true)
        case "crop": (mode, enlarge) = ("fill", false)
        case "pad": throw AdapterError(name, "not supported: 'fit=pad' (Kiln pads by amounts, not to a box; use fit=contain)")
        default: throw AdapterError(name, "fit=\(fit.prefix(20)) must be scale-down, contain, cover or crop")
        }
        return try AdaptedSource.resize(width: w, height: h, mode: mode, enlarge: enlarge, fitGiven: p["fit"] != nil,
                                        adapter: name, sizes: "width or height")
    }

    /// Cloudflare's gravity as Kiln's `g:` argument.
    func gravity(_ g: String) throws(AdapterError) -> String {
        switch g {
        case "auto": return "smart"
        case "center": return "center"
        case "left": return "west"
        case "right": return "east"
        case "top": return "north"
        case "bottom": return "south"
        default:
            let parts = g.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw AdapterError(name, "gravity=\(g.prefix(20)) not supported (auto, center, left, right, top, bottom or XxY)")
            }
            let x = try AdaptedSource.decimal(String(parts[0]), "gravity x", 0...1, adapter: name)
            let y = try AdaptedSource.decimal(String(parts[1]), "gravity y", 0...1, adapter: name)
            return "fp:\(x):\(y)"
        }
    }
}
