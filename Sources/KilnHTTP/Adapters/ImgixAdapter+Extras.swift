import KilnModel

/// imgix's parameters beyond size and format: the focal point, `auto`, Client Hints, trim and
/// watermarks, each translated into Kiln's own option (`ImgixAdapter` has the table).
extension ImgixAdapter {
    /// imgix's documented quality for `auto=compress` when the URL has no `q`.
    static let compressQuality = 45
    /// imgix's default `trim-md` (mean difference) for `trim=auto`.
    static let defaultTrimDifference = 11
    /// imgix's default `mark-pad` in pixels.
    static let defaultMarkPad = 5

    /// `crop` as `g:`: a compass side or corner, `entropy`/`edges` as `smart`, `focalpoint` with
    /// `fp-x`/`fp-y` (default 0.5) as `g:fp:x:y`; `fp-x`/`fp-y` without it are refused (imgix
    /// ignores them, which would give two URLs for one image).
    func gravityOptions(_ p: QueryParameters) throws(AdapterError) -> [String] {
        guard let crop = p["crop"] else {
            if p["fp-x"] != nil || p["fp-y"] != nil { throw AdapterError(name, "fp-x and fp-y need crop=focalpoint") }
            return []
        }
        guard crop == "focalpoint" else {
            if p["fp-x"] != nil || p["fp-y"] != nil { throw AdapterError(name, "fp-x and fp-y need crop=focalpoint") }
            return ["g:\(try gravity(crop))"]
        }
        let x = try p["fp-x"].map { (v) throws(AdapterError) in try AdaptedSource.decimal(v, "fp-x", 0...1, adapter: name) } ?? "0.5"
        let y = try p["fp-y"].map { (v) throws(AdapterError) in try AdaptedSource.decimal(v, "fp-y", 0...1, adapter: name) } ?? "0.5"
        return ["g:fp:\(x):\(y)"]
    }

    /// `auto=format` (`f:auto`; not with `fm`), `auto=compress` (`q:45` unless `q` is given), or both.
    func autoOptions(_ p: QueryParameters) throws(AdapterError) -> [String] {
        guard let auto = p["auto"] else { return [] }
        let words = auto.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !words.isEmpty, Set(words).isSubset(of: ["format", "compress"]), Set(words).count == words.count else {
            throw AdapterError(name, "auto=\(auto.prefix(30)) not supported: only format (Kiln's f:auto), compress (q:45) or both")
        }
        var options: [String] = []
        if words.contains("format") {
            guard p["fm"] == nil else {
                throw AdapterError(name, "auto=format and fm together: Kiln's f:auto falls back to the source's format; drop fm")
            }
            options.append("f:auto")
        }
        if words.contains("compress"), p["q"] == nil { options.append("q:\(ImgixAdapter.compressQuality)") }
        return options
    }

    /// The hints of `ch` (`Width,DPR,Save-Data`), lowercased; empty without `ch`.
    static func hints(_ value: String?) -> Set<String> {
        guard let value else { return [] }
        return Set(value.split(separator: ",").map { $0.trimmingSpacesAndTabs().lowercased() })
    }

    /// `ch`: Kiln's `ch:1` (the device's DPR and Save-Data); `Width` without `w` is `w:auto`,
    /// written by `sizeOptions`. Kiln's `ch:1` takes DPR and Save-Data together.
    func clientHintOptions(_ p: QueryParameters) throws(AdapterError) -> [String] {
        guard let ch = p["ch"] else { return [] }
        let hints = ImgixAdapter.hints(ch)
        guard !hints.isEmpty, hints.isSubset(of: ["width", "dpr", "save-data"]) else {
            throw AdapterError(name, "ch=\(ch.prefix(40)) not supported: a list of Width, DPR and Save-Data")
        }
        return ["ch:1"]
    }

    /// `trim=auto` (`trim-md`, default 11) as `t:<md>`; `trim=color` as `t:<tol>:<hex>` with
    /// `trim-color` (else the top-left pixel's colour, Kiln's default) and `trim-tol` (default 0).
    func trimOptions(_ p: QueryParameters) throws(AdapterError) -> [String] {
        let autoOnly = ["trim-md"], colorOnly = ["trim-color", "trim-tol"]
        guard let trim = p["trim"] else {
            if let stray = (autoOnly + colorOnly).first(where: { p[$0] != nil }) { throw AdapterError(name, "\(stray) needs trim") }
            return []
        }
        switch trim {
        case "auto":
            if let stray = colorOnly.first(where: { p[$0] != nil }) { throw AdapterError(name, "\(stray) needs trim=color") }
            let md = try p["trim-md"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "trim-md", 0...255, adapter: name) }
            return ["t:\(md ?? ImgixAdapter.defaultTrimDifference)"]
        case "color":
            if p["trim-md"] != nil { throw AdapterError(name, "trim-md needs trim=auto") }
            let tol = try p["trim-tol"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "trim-tol", 0...255, adapter: name) } ?? 0
            guard let c = p["trim-color"] else { return ["t:\(tol)"] }
            return ["t:\(tol):\(try color(c, parameter: "trim-color"))"]
        default:
            throw AdapterError(name, "trim=\(trim.prefix(20)) not supported (auto or color)")
        }
    }

    /// `mark` as `wm:<name>:<opacity>:<position>:<x>:<y>:<scale>`: the name of a `[watermarks]`
    /// image (never a URL: Kiln fetches no watermark), `mark-alpha` (0–100, default 100),
    /// `mark-align` (default `bottom,right`), `mark-pad` (pixels from the edges named, default 5;
    /// none on a centred axis) and `mark-w` (a fraction of the width; default the mark's own size).
    func watermarkOptions(_ p: QueryParameters) throws(AdapterError) -> [String] {
        let modifiers = ["mark-alpha", "mark-align", "mark-pad", "mark-w"]
        guard let mark = p["mark"] else {
            if let stray = modifiers.first(where: { p[$0] != nil }) { throw AdapterError(name, "\(stray) needs mark") }
            return []
        }
        if mark.contains("/") || mark.contains(":") || mark.lowercased().hasPrefix("http") {
            throw AdapterError(name, "mark=\(mark.prefix(40)): Kiln draws only configured watermarks ([watermarks]); give one's name, not a URL")
        }
        guard (1...64).contains(mark.utf8.count),
              mark.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
            throw AdapterError(name, "mark=\(mark.prefix(40)) must be the name of a configured watermark (letters, digits, _ and -)")
        }
        let alpha = try p["mark-alpha"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "mark-alpha", 0...100, adapter: name) } ?? 100
        let (vertical, horizontal) = try markAlignment(p["mark-align"] ?? "bottom,right")
        let pad = try p["mark-pad"].map { (v) throws(AdapterError) in try AdaptedSource.integer(v, "mark-pad", 0...65_535, adapter: name) }
            ?? ImgixAdapter.defaultMarkPad
        let scale = try p["mark-w"].map { (v) throws(AdapterError) -> String in
            if let d = Double(v), d > 1 {
                throw AdapterError(name, "mark-w=\(v.prefix(20)) not supported: Kiln scales a watermark by a fraction of the width (0–1), not to pixels")
            }
            return try AdaptedSource.decimal(v, "mark-w", 0...1, adapter: name)
        } ?? "0"
        let position = ImgixAdapter.compass(vertical: vertical, horizontal: horizontal)
        let x = horizontal.isEmpty ? 0 : pad, y = vertical.isEmpty ? 0 : pad
        return ["wm:\(mark):\(AdaptedSource.formatted(Double(alpha) / 100)):\(position):\(x):\(y):\(scale)"]
    }

    /// `mark-align`'s words (`top`, `middle`, `bottom`, `left`, `center`, `right`, at most one of
    /// each axis) as compass letters: `n`/`s`/`` and `w`/`e`/``.
    func markAlignment(_ value: String) throws(AdapterError) -> (vertical: String, horizontal: String) {
        var vertical: String?, horizontal: String?
        for word in value.split(separator: ",", omittingEmptySubsequences: false) {
            switch word {
            case "top", "middle", "bottom":
                guard vertical == nil else { break }
                vertical = word == "top" ? "n" : word == "bottom" ? "s" : ""
                continue
            case "left", "center", "right":
                guard horizontal == nil else { break }
                horizontal = word == "left" ? "w" : word == "right" ? "e" : ""
                continue
            default: break
            }
            throw AdapterError(name, "mark-align=\(value.prefix(40)) not supported (top, middle or bottom, and left, center or right)")
        }
        return (vertical ?? "", horizontal ?? "")
    }

    /// Compass letters as Kiln's position (`g:` and `wm:` names): `n` is `north`, `nw` stays,
    /// none is `center`.
    static func compass(vertical: String, horizontal: String) -> String {
        switch (vertical, horizontal) {
        case ("", ""): return "center"
        case ("n", ""): return "north"
        case ("s", ""): return "south"
        case ("", "w"): return "west"
        case ("", "e"): return "east"
        default: return vertical + horizontal
        }
    }
}
