import KilnModel

/// thumbor URLs (thumbor 7.8): `/unsafe|<hmac>/[trim/][AxB:CxD/][fit-in/][-]Wx[-]H/[halign/]
/// [valign/][smart/][filters:…/]<image>` (`ThumborURL`), the image a path on this server or an
/// absolute URL under a configured origin (`AdaptedSource`).
///
/// Claimed: a first segment shaped like thumbor's signature (28 URL-safe base64 characters
/// ending with `=`), or `unsafe` followed by one of thumbor's parts (`300x200`, `fit-in`,
/// `filters:…`, …); `/unsafe/w:300/cat.jpg` stays a native URL. A signature is checked with
/// `adapters.thumbor_key` (`ThumborSignature`): a bad one is a 403, a good one admits the URL
/// as signed.
///
/// | thumbor | Kiln |
/// | --- | --- |
/// | `WxH` (default: thumbor's crop-to-fill, which enlarges) | `rs:<W>:<H>:fill` + `el:1`; `w:`/`h:` with one size |
/// | `fit-in/WxH` (never enlarges) | `rs:<W>:<H>:fit` |
/// | `-W`, `-H` | `flip:h`, `flip:v` after the resize |
/// | `AxB:CxD` (left, top, right, bottom) | `crop:<C−A>:<D−B>:<A>:<B>` before the resize |
/// | `left`/`right`, `top`/`bottom`, `smart` | `g:west`, `g:nw`, …, `g:smart` |
/// | `trim`, `trim:top-left:<n>` | `t:0`, `t:<n>` |
/// | filters (`ThumborFilters`) | `q:`, `f:`, `bl:`, `gs`, `br:`, `co:`, `rc:`, `bg:`, `rot:`, `strip:1`, `icc:srgb`, `mb:`, `wm:` |
///
/// docs/integrations.md has the whole table, with every refusal and its reason.
public struct ThumborAdapter: URLAdapter {
    public let name = "thumbor"
    public var origins: [AdapterOrigin]
    /// The security key's signer; nil without `adapters.thumbor_key`.
    let signer: ThumborSignature?

    public init(key: String = "", origins: [AdapterOrigin] = []) {
        self.signer = key.isEmpty ? nil : ThumborSignature(key: key)
        self.origins = origins
    }

    /// thumbor's URL parts and the Kiln options each becomes (`AdapterParameter`).
    public static let partParameters: [AdapterParameter] = [
        .init("unsafe"),
        .init("hmac"),
        .init("meta", refused: "meta/ answers thumbor's JSON of the planned operations; Kiln's f:json describes the image, on native URLs"),
        .init("debug", refused: "debug/ draws thumbor's focal points on the image"),
        .init("trim", options: ["trim"]),
        .init("AxB:CxD", options: ["crop"]),
        .init("fit-in", options: ["resize", "width", "height", "enlarge"]),
        .init("adaptive-fit-in", options: ["resize", "width", "height", "enlarge"]),
        .init("full-fit-in", options: ["width", "height", "enlarge"]),
        .init("adaptive-full-fit-in", options: ["width", "height", "enlarge"]),
        .init("WxH", options: ["resize", "width", "height", "enlarge", "flip"]),
        .init("halign", aliases: ["left", "center", "right"], options: ["gravity"]),
        .init("valign", aliases: ["top", "middle", "bottom"], options: ["gravity"]),
        .init("smart", options: ["gravity"]),
        .init("filters"),
    ]

    /// thumbor's filters and the Kiln options each becomes.
    public static let filterParameters: [AdapterParameter] = [
        .init("quality", options: ["quality"]),
        .init("format", options: ["format"]),
        .init("blur", options: ["blur"]),
        .init("grayscale", options: ["grayscale"]),
        .init("brightness", options: ["brightness"]),
        .init("contrast", options: ["contrast"]),
        .init("round_corner", options: ["rounded", "background"]),
        .init("fill", options: ["background"]),
        .init("no_upscale"),
        .init("upscale", options: ["enlarge"]),
        .init("stretch", options: ["resize"]),
        .init("rotate", options: ["rotate"]),
        .init("strip_exif", options: ["strip"]),
        .init("strip_icc", options: ["icc"]),
        .init("max_bytes", options: ["max_bytes"]),
        .init("watermark", options: ["watermark"]),
        .init("focal", refused: "focal() names pixels of the source, whose size the URL does not give; Kiln's g:fp:<x>:<y> takes fractions"),
        .init("sharpen", refused: "thumbor's sharpen(amount,radius,luminance_only) has no Kiln twin; Kiln's sh:<sigma> on native URLs"),
        .init("saturation", refused: "thumbor's saturation scales in HSV; Kiln's sa: works around the luma, on native URLs"),
        .init("extract_focal", refused: "extract_focal() reads a crop out of the image's own URL"),
        .init("proportion", refused: "proportion() scales by a fraction of the source's size, which the URL does not give"),
        .init("background_color", refused: "background_color() fills transparency; use fill(<colour>)"),
    ]

    public static let parameters = partParameters + filterParameters

    public func adapt(path: String, query: String?) throws(AdapterError) -> AdaptedURL? {
        guard var url = ThumborURL.parse(path) else { return nil }
        // The signature first: a bad one is a 403 whatever else the URL holds.
        let signing: AdaptedURL.Signing
        switch url.authority {
        case .unsafe:
            signing = signer == nil ? .unsigned : .unsignedWhileKeyed
        case .signed(let signature):
            guard let signer else {
                throw .badSignature(name, "a signed URL, but this server has no thumbor key (adapters.thumbor_key)")
            }
            guard signer.isValid(signature, for: url.signed) else { throw .badSignature(name) }
            signing = .verified
        }
        // thumbor ignores the query (tornado's path has none): so does Kiln, as on native URLs.
        try url.readParts(adapter: name)
        let filters = try url.filters.map { (text) throws(AdapterError) in try ThumborFilters(text, adapter: name) }
        var options = try geometry(url, filters)
        if let filters {
            options += filters.options
            if let bg = filters.background { options.append("bg:\(bg)") }
        }
        guard !url.image.isEmpty else { throw AdapterError(name, "no image after the options") }
        let source = try source(url.image)
        return AdaptedURL(adapter: name, options: options, sourcePath: source, signing: signing)
    }

    /// The image: an absolute URL under an origin, a URL without its scheme as thumbor's HTTP
    /// loader takes it (`img.example.com/originals/cat.jpg`) when its host is an origin's, else a
    /// local path.
    func source(_ image: Substring) throws(AdapterError) -> String {
        let lower = image.prefix(8).lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            return try AdaptedSource.resolve(String(image), origins: origins, adapter: name, what: "image")
        }
        let host = image.prefix { $0 != "/" }.lowercased()
        for scheme in ["https://", "http://"] where origins.contains(where: { $0.baseURL.hasPrefix(scheme + host + "/") }) {
            if let source = try? AdaptedSource.resolve(scheme + image, origins: origins, adapter: name, what: "image") { return source }
        }
        return try AdaptedSource.resolve("/" + image, origins: origins, adapter: name, what: "image")
    }

    /// trim, the manual crop, the resize with its gravity, and the flips, in thumbor's order
    /// (`thumbor/transformer.py`).
    func geometry(_ u: ThumborURL, _ f: ThumborFilters?) throws(AdapterError) -> [String] {
        let refusals = ThumborAdapter.partParameters.refusals
        if u.meta { throw AdapterError(name, "not supported: 'meta' (\(refusals["meta"]!))") }
        if u.debug { throw AdapterError(name, "not supported: 'debug' (\(refusals["debug"]!))") }
        var options: [String] = []
        if let trim = u.trim {
            guard u.crop == nil else {
                throw AdapterError(name, "trim with AxB:CxD not supported: thumbor's crop counts from the untrimmed source, Kiln's from the trimmed image")
            }
            guard trim.position == nil || trim.position == "top-left" else {
                throw AdapterError(name, "trim:\(trim.position!.prefix(20)) not supported: Kiln's trim compares with the top-left pixel "
                    + "(thumbor 7.8 reads trim:<n> as the position, i.e. bottom-right at tolerance 0; write trim:top-left:<n>)")
            }
            options.append("t:\(trim.tolerance ?? 0)")
        }
        // thumbor clamps the box to the image and ignores an empty one (`manual_crop`).
        if let c = u.crop, c.right > c.left, c.bottom > c.top {
            options.append("crop:\(c.right - c.left):\(c.bottom - c.top):\(c.left):\(c.top)")
        }
        options += try resize(u, f)
        switch (u.flipHorizontally, u.flipVertically) {
        case (true, true): options.append("flip:hv")
        case (true, false): options.append("flip:h")
        case (false, true): options.append("flip:v")
        case (false, false): break
        }
        return options
    }

    /// The size and mode: thumbor's default crops to fill the box and enlarges (unless
    /// `no_upscale()`), `fit-in` fits and never enlarges (unless `upscale()`).
    func resize(_ u: ThumborURL, _ f: ThumborFilters?) throws(AdapterError) -> [String] {
        let noUpscale = f?.noUpscale ?? false, upscale = f?.upscale ?? false
        guard let fit = u.fit else {
            // orig: the source's own size, which Kiln's sizes cannot name (it needs no resize
            // only when the other side is absent or orig too).
            if u.width == .orig || u.height == .orig {
                guard (u.width.pixels ?? 0) == 0, (u.height.pixels ?? 0) == 0 else {
                    throw AdapterError(name, "orig with a size not supported: the source's own width or height is not known from the URL")
                }
                return []
            }
            let (w, h) = (u.width.pixels ?? 0, u.height.pixels ?? 0)
            var options: [String]
            switch (w, h) {
            case (0, 0): return []
            case (_, 0): options = ["w:\(w)"]
            case (0, _): options = ["h:\(h)"]
            default: options = ["rs:\(w):\(h):\(f?.stretch == true ? "force" : "fill")"]
            }
            if !noUpscale { options.append("el:1") }
            if w > 0, h > 0, f?.stretch != true, let g = gravity(u) { options.append("g:\(g)") }
            return options
        }
        // In fit-in, orig never binds: a box as wide as the source fits by the other side.
        let (w, h) = (u.width.pixels ?? 0, u.height.pixels ?? 0)
        if f?.fill == true, u.hasSize {
            throw AdapterError(name, "fill() with \(fit.rawValue) not supported: it pads the image to the box; Kiln pads by amounts (pad:), not to a box")
        }
        switch fit {
        case .fitIn, .adaptive:
            if fit == .adaptive, w > 0, h > 0, w != h {
                throw AdapterError(name, "adaptive-fit-in with a \(w)x\(h) box not supported: it turns the box to the source's orientation, "
                    + "which the URL does not give; use fit-in, or a square box")
            }
            switch (w, h) {
            case (0, 0): return []
            case (_, 0): return ["w:\(w)"] + (upscale ? ["el:1"] : [])
            case (0, _): return ["h:\(h)"] + (upscale ? ["el:1"] : [])
            default: return ["rs:\(w):\(h):fit"] + (upscale ? ["el:1"] : [])
            }
        case .full, .adaptiveFull:
            switch (w, h) {
            case (0, 0): return []
            case (_, 0): return ["w:\(w)", "el:1"]
            case (0, _): return ["h:\(h)", "el:1"]
            default:
                throw AdapterError(name, "\(fit.rawValue) with both sizes not supported: it covers the box without cutting, a size that depends on "
                    + "the source's aspect ratio; Kiln's fit, fill and force cannot name it")
            }
        }
    }

    /// Where the fill crop is cut: `smart`, else halign/valign (nil: the centre).
    func gravity(_ u: ThumborURL) -> String? {
        if u.smart { return "smart" }
        let v = u.valign == "top" ? "n" : u.valign == "bottom" ? "s" : ""
        let h = u.halign == "left" ? "w" : u.halign == "right" ? "e" : ""
        switch (v, h) {
        case ("", ""): return nil
        case ("n", ""): return "north"
        case ("s", ""): return "south"
        case ("", "w"): return "west"
        case ("", "e"): return "east"
        default: return v + h
        }
    }
}
