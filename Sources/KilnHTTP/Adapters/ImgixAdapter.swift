import KilnModel

/// imgix's query parameters on a plain source path: `/photos/cat.jpg?w=300&h=200&fit=crop`.
/// With this adapter on, a query string that names at least one imgix parameter, on a path that
/// no other adapter claims and that a client sent (never nginx's trusted rewrites), is read as
/// imgix parameters, and the whole path is the source (no Kiln options in it); a query that
/// names none (`?v=2`) is ignored, as on every native URL.
///
/// | imgix | Kiln |
/// | --- | --- |
/// | `w`, `h` (whole pixels) | `w:`, `h:`, or `rs:<w>:<h>:<mode>` with both |
/// | `fit=clip` (and no `fit`) / `max` | `fit` + `el:1` / `fit` |
/// | `fit=crop` / `min` | `fill` + `el:1` / `fill` |
/// | `fit=scale` | `force` + `el:1` |
/// | `crop=top,left,…` / `entropy` / `edges` | `g:north`, `g:nw`, … / `g:smart` |
/// | `crop=focalpoint` with `fp-x`, `fp-y` (0–1, default 0.5) | `g:fp:<x>:<y>` |
/// | `fm` = `jpg`, `pjpg`, `png`, `webp`, `avif`, `json`, `blurhash` | `f:jpeg`, `f:jpeg` + `pg:1`, `f:png`, … |
/// | `auto=format` / `compress` / `format,compress` | `f:auto` / `q:45` unless `q` / both |
/// | `q` (1–100) | `q:` |
/// | `dpr` (1–4) | `dpr:` |
/// | `ch` (`Width`, `DPR`, `Save-Data`) | `ch:1`, and `w:auto` for `Width` without `w` |
/// | `bg` (`rgb`, `rrggbb`, opaque `argb`/`aarrggbb`) | `bg:` |
/// | `blur` (0–2000) | `bl:<blur ÷ 10>` |
/// | `flip` (`h`, `v`, `hv`) | `flip:` |
/// | `rot` (0, 90, 180, 270) | `rot:` |
/// | `chromasub` (420, 422, 444) | `ss:` |
/// | `trim=auto` (`trim-md`, default 11) / `trim=color` (`trim-color`, `trim-tol`) | `t:<md>` / `t:<tol>:<hex>` |
/// | `mark` (a `[watermarks]` name), `mark-alpha`, `mark-align`, `mark-pad`, `mark-w` | `wm:<name>:<opacity>:<position>:<x>:<y>:<scale>` |
/// | `s` (with `adapters.imgix_token`) | the URL is signed (`ImgixSignature`) |
/// | `ixlib` | nothing (the client library's version; changes no pixel) |
///
/// Everything else is a 400 naming it (`auto=enhance`, `crop=faces`, `fit=facearea`, a `mark` URL …).
public struct ImgixAdapter: URLAdapter {
    public let name = "imgix"

    /// imgix's secure URL token (`adapters.imgix_token`); empty: `s=` is refused.
    public var token: String

    public init(token: String = "") {
        self.token = token
    }

    /// imgix's parameters and the Kiln options each becomes (`AdapterParameter`).
    public static let parameters: [AdapterParameter] = [
        .init("w", options: ["width", "resize", "enlarge"]),
        .init("h", options: ["height", "resize", "enlarge"]),
        .init("fit", options: ["resize", "enlarge"]),
        .init("crop", options: ["gravity"]),
        .init("fp-x", options: ["gravity"]),
        .init("fp-y", options: ["gravity"]),
        .init("fm", options: ["format", "progressive"]),
        .init("auto", options: ["format", "quality"]),
        .init("q", options: ["quality"]),
        .init("dpr", options: ["dpr"]),
        .init("ch", options: ["clienthints", "width", "resize", "enlarge"]),
        .init("bg", options: ["background"]),
        .init("blur", options: ["blur"]),
        .init("flip", options: ["flip"]),
        .init("rot", options: ["rotate"]),
        .init("chromasub", options: ["subsampling"]),
        .init("trim", options: ["trim"]),
        .init("trim-md", options: ["trim"]),
        .init("trim-color", options: ["trim"]),
        .init("trim-tol", options: ["trim"]),
        .init("mark", options: ["watermark"]),
        .init("mark-alpha", options: ["watermark"]),
        .init("mark-align", options: ["watermark"]),
        .init("mark-pad", options: ["watermark"]),
        .init("mark-w", options: ["watermark"]),
        .init("ixlib"),
        // The signature: checked (`ImgixSignature`), then no option.
        .init("s"),
    ]

    static let known = parameters.accepted
    static let refused = parameters.refusals
    /// Every name imgix declares: a query that names none of them is no imgix URL (a native URL's
    /// cache-buster such as `?v=2` is ignored, as on every native URL).
    static let declared = Set(parameters.flatMap(\.names))

    public func adapt(path: String, query: String?) throws(AdapterError) -> AdaptedURL? {
        guard let query, !query.isEmpty else { return nil }
        let p = try QueryParameters(query, adapter: name)
        guard p.names.contains(where: { ImgixAdapter.declared.contains($0) }) else { return nil }
        // First: a tampered URL is a 403 whatever else is wrong with it, and renders nothing.
        let signing = try ImgixSignature(token: token).check(path: path, rawQuery: query, adapter: name)
        if let first = p.names.first(where: { ImgixAdapter.refused[$0] != nil }) {
            throw AdapterError(name, "not supported: '\(first)' (\(ImgixAdapter.refused[first]!))")
        }
        let unknown = p.unknown(ImgixAdapter.known)
        guard unknown.isEmpty else { throw AdapterError.unsupported(name, unknown) }

        var options = try sizeOptions(p)
        options += try gravityOptions(p)
        options += try autoOptions(p)
        if let fm = p["fm"] {
            switch fm {
            case "jpg", "jpeg": options.append("f:jpeg")
            case "pjpg": options += ["f:jpeg", "pg:1"]
            case "png", "webp", "avif", "json", "blurhash": options.append("f:\(fm)")
            default: throw AdapterError(name, "fm=\(fm.prefix(20)) not supported (jpg, pjpg, png, webp, avif, json or blurhash)")
            }
        }
        if let cs = p["chromasub"] {
            guard ChromaSubsampling(rawValue: cs) != nil else { throw AdapterError(name, "chromasub=\(cs.prefix(20)) must be 420, 422 or 444") }
            options.append("ss:\(cs)")
        }
        if let q = p["q"] { options.append("q:\(try AdaptedSource.integer(q, "q", 1...100, adapter: name))") }
        if let d = p["dpr"] { options.append("dpr:\(try AdaptedSource.decimal(d, "dpr", 1...4, adapter: name))") }
        if let bg = p["bg"] { options.append("bg:\(try color(bg))") }
        if let b = p["blur"] {
            let blur = try AdaptedSource.integer(b, "blur", 0...2000, adapter: name)
            if blur > 0 { options.append("bl:\(AdaptedSource.formatted(Double(blur) / 10))") }
        }
        if let f = p["flip"] {
            guard ["h", "v", "hv"].contains(f) else { throw AdapterError(name, "flip=\(f.prefix(20)) must be h, v or hv") }
            options.append("flip:\(f)")
        }
        if let r = p["rot"] {
            guard ["0", "90", "180", "270"].contains(r) else {
                throw AdapterError(name, "rot=\(r.prefix(20)) not supported: Kiln rotates by 0, 90, 180 or 270 degrees")
            }
            options.append("rot:\(r)")
        }
        options += try clientHintOptions(p)
        options += try trimOptions(p)
        options += try watermarkOptions(p)
        let source = try AdaptedSource.decodedPath(Substring(path), adapter: name, what: "path", shown: String(path.prefix(100)))
        return AdaptedURL(adapter: name, options: options, sourcePath: source, signing: signing)
    }

    /// `w`, `h` and `fit` as one resize.
    func sizeOptions(_ p: QueryParameters) throws(AdapterError) -> [String] {
        let w = try p["w"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "w", 1...65_535, adapter: name) }
        let h = try p["h"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "h", 1...65_535, adapter: name) }
        let (mode, enlarge): (String, Bool)
        switch p["fit"] ?? "clip" {
        case "clip": (mode, enlarge) = ("fit", true)
        case "max": (mode, enlarge) = ("fit", false)
        case "crop": (mode, enlarge) = ("fill", true)
        case "min": (mode, enlarge) = ("fill", false)
        case "scale": (mode, enlarge) = ("force", true)
        case let other: throw AdapterError(name, "fit=\(other.prefix(20)) not supported (clip, max, crop, min or scale)")
        }
        if w == nil, ImgixAdapter.hints(p["ch"]).contains("width") {
            // The device's width (Client Hints) in place of `w`: `w:auto` after the box it widens.
            let box = h.map { ["rs:0:\($0):\(mode)"] } ?? []
            return box + ["w:auto"] + (enlarge ? ["el:1"] : [])
        }
        return try AdaptedSource.resize(width: w, height: h, mode: mode, enlarge: enlarge, fitGiven: p["fit"] != nil,
                                        adapter: name, sizes: "w or h")
    }

    /// `crop=top,left` → `nw`; `entropy`/`edges` → `smart`.
    func gravity(_ crop: String) throws(AdapterError) -> String {
        let words = Set(crop.split(separator: ",").map(String.init))
        if words == ["entropy"] || words == ["edges"] { return "smart" }
        let vertical = words.contains("top") ? "n" : words.contains("bottom") ? "s" : ""
        let horizontal = words.contains("left") ? "w" : words.contains("right") ? "e" : ""
        let known: Set<String> = ["top", "bottom", "left", "right"]
        guard !words.isEmpty, words.isSubset(of: known), !(words.contains("top") && words.contains("bottom")),
              !(words.contains("left") && words.contains("right")) else {
            throw AdapterError(name, "crop=\(crop.prefix(30)) not supported (top, bottom, left, right, two of them, entropy, edges or focalpoint)")
        }
        return ImgixAdapter.compass(vertical: vertical, horizontal: horizontal)
    }

    /// imgix's `bg`: 3 or 6 hex digits, or 4 or 8 with an opaque alpha first (ARGB).
    func color(_ value: String, parameter: String = "bg") throws(AdapterError) -> String {
        var hex = value
        if hex.count == 4, hex.hasPrefix("f") || hex.hasPrefix("F") { hex = String(hex.dropFirst()) }
        if hex.count == 8, hex.lowercased().hasPrefix("ff") { hex = String(hex.dropFirst(2)) }
        guard !value.hasPrefix("#"), let c = AdaptedSource.hexColor(hex) else {
            throw AdapterError(name, "\(parameter)=\(value.prefix(20)) not supported: rgb, rrggbb or an opaque argb/aarrggbb hex colour")
        }
        return c
    }
}
