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
/// | `trim=t;r;b;l`, `trim.top`/`right`/`bottom`/`left`/`width`/`height` | `cut:<t>:<r>:<b>:<l>[:<w>:<h>]`, before the resize |
/// | `anim=false` / `true` | `frame:0` (the first frame, a still) / nothing |
/// | `onerror=redirect` | a failed render answers `302` to the source (`AdaptedURL.onErrorRedirect`) |
///
/// Not supported (400 naming them): `fit=pad`, `gravity=face`, CSS
/// colour names and functions, and every other option (`brightness`, `contrast`, …).
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
        .init("anim", options: ["frame"]),
        // Changes no option: where the client is sent when the render fails (`AdaptedURL.onErrorRedirect`).
        .init("onerror"),
        .init("trim", options: ["cut"]),
        .init("trim.top", options: ["cut"]),
        .init("trim.right", options: ["cut"]),
        .init("trim.bottom", options: ["cut"]),
        .init("trim.left", options: ["cut"]),
        .init("trim.width", options: ["cut"]),
        .init("trim.height", options: ["cut"]),
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

        // Before the resize: Cloudflare trims the source's pixels.
        var options = try trimOptions(p)
        options += try sizeOptions(p)
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
        if let a = p["anim"] {
            switch a {
            case "false": options.append("frame:0")
            case "true": break
            default: throw AdapterError(name, "anim=\(a.prefix(20)) must be true or false")
            }
        }
        let rawSource = rest[rest.index(after: slash)...]
        let lower = rawSource.prefix(8).lowercased()
        let reference = lower.hasPrefix("http:") || lower.hasPrefix("https:") ? String(rawSource) : "/" + rawSource
        let source = try AdaptedSource.resolve(reference, origins: origins, adapter: name, what: "source")
        var redirect: String?
        if let e = p["onerror"] {
            guard e == "redirect" else { throw AdapterError(name, "onerror=\(e.prefix(20)) must be redirect") }
            redirect = CloudflareAdapter.location(reference)
        }
        return AdaptedURL(adapter: name, options: options, sourcePath: source, onErrorRedirect: redirect)
    }

    /// The source as the URL wrote it, for `Location:`: every byte outside printable ASCII (none
    /// reaches here from a well-formed request target, but a header must never carry one) escaped.
    static func location(_ reference: String) -> String {
        var out = ""
        for byte in reference.utf8 {
            if byte > 0x20 && byte < 0x7F {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// `trim=<top>;<right>;<bottom>;<left>` or `trim.top`, `trim.right`, `trim.bottom`,
    /// `trim.left`, `trim.width`, `trim.height` (source pixels, cut before resizing) as Kiln's
    /// `cut:`; `trim.width`/`trim.height` keep that much from the left/top cut, so they replace
    /// `trim.right`/`trim.bottom`. Nothing cut: no option.
    func trimOptions(_ p: [String: String]) throws(AdapterError) -> [String] {
        let sides = ["trim.top", "trim.right", "trim.bottom", "trim.left", "trim.width", "trim.height"]
        func pixels(_ v: String, _ n: String) throws(AdapterError) -> Int { try AdaptedSource.integer(v, n, 0...65_535, adapter: name) }
        var v = [0, 0, 0, 0, 0, 0]
        if let trim = p["trim"] {
            guard sides.allSatisfy({ p[$0] == nil }) else { throw AdapterError(name, "trim and trim.<side> together: give one form") }
            let parts = trim.split(separator: ";", omittingEmptySubsequences: false)
            guard parts.count == 4 else {
                throw AdapterError(name, "trim=\(trim.prefix(30)) must be <top>;<right>;<bottom>;<left> in pixels")
            }
            for i in 0..<4 { v[i] = try pixels(String(parts[i]), "trim") }
        } else {
            for (i, side) in sides.enumerated() { if let s = p[side] { v[i] = try pixels(s, side) } }
            if p["trim.width"] != nil, p["trim.right"] != nil { throw AdapterError(name, "trim.width and trim.right together: give one") }
            if p["trim.height"] != nil, p["trim.bottom"] != nil { throw AdapterError(name, "trim.height and trim.bottom together: give one") }
            if p["trim.width"] == "0" || p["trim.height"] == "0" { throw AdapterError(name, "trim.width and trim.height must be at least 1") }
        }
        guard v.contains(where: { $0 != 0 }) else { return [] }
        let edges = v[0..<4].map(String.init).joined(separator: ":")
        return ["cut:" + edges + (v[4] == 0 && v[5] == 0 ? "" : ":\(v[4]):\(v[5])")]
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
