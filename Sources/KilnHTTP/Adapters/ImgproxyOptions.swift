import KilnModel

/// imgproxy's options read one by one (a later one wins, as in imgproxy) and written as Kiln's
/// in imgproxy's order of work: trim, crop, rotate and flip, resize, blur, sharpen, padding,
/// watermark, then the request-wide options. Empty arguments leave a value as it was
/// (`rs::300` changes the width only), as imgproxy reads them.
struct ImgproxyOptions {
    let adapter: String
    let watermark: String?

    var resizingType = "fit"
    var width = 0, height = 0
    var enlarge = false
    var extend = false
    var extendGravity = "center"
    var gravity: String?
    var crop: String?
    var trim: String?
    var padding: String?
    var rotate: String?
    var flip: String?
    var request: [String: String] = [:]
    var watermarkOption: String?
    var format: String?
    var formatFromExtension: String?
    var strip: Bool?, keepCopyright: Bool?

    init(adapter: String, watermark: String?) {
        self.adapter = adapter
        self.watermark = watermark
    }

    /// One option by imgproxy's long name (`resize`), its arguments split at `:`.
    mutating func read(_ name: String, _ a: [String], fromExtension: Bool = false) throws(AdapterError) {
        func arg(_ i: Int) -> String? { i < a.count && !a[i].isEmpty ? a[i] : nil }
        switch name {
        case "resize":
            if let t = arg(0) { try readResizingType(t) }
            try readSize(Array(a.dropFirst()))
        case "size": try readSize(a)
        case "resizing_type": try readResizingType(arg(0) ?? "fit")
        case "width": width = try int(arg(0) ?? "0", "width", 0...65_535)
        case "height": height = try int(arg(0) ?? "0", "height", 0...65_535)
        case "enlarge": enlarge = try bool(arg(0), "enlarge")
        case "extend":
            extend = try bool(arg(0), "extend")
            if let g = arg(1) {
                guard let compass = ImgproxyOptions.compass[g], a.dropFirst(2).allSatisfy({ $0.isEmpty || Double($0) == 0 }) else {
                    throw AdapterError(adapter, "extend gravity '\(g.prefix(20))' not supported: no, so, ea, we, noea, nowe, soea, sowe or ce without offsets")
                }
                extendGravity = compass
            }
        case "dpr": request["dpr"] = try AdaptedSource.decimal(arg(0) ?? "", "dpr", 1...4, adapter: adapter)
        case "gravity": gravity = try readGravity(a)
        case "crop":
            let w = try int(arg(0) ?? "", "crop width", 1...65_535), h = try int(arg(1) ?? "", "crop height", 1...65_535)
            var c = "crop:\(w):\(h)"
            if a.count > 2, let g = arg(2) {
                guard let compass = ImgproxyOptions.compass[g], a.count == 3 else {
                    throw AdapterError(adapter, "crop gravity '\(g.prefix(20))' not supported: no, so, ea, we, noea, nowe, soea, sowe or ce without offsets")
                }
                c += ":\(compass)"
            }
            crop = c
        case "trim":
            var t = "t:\(try int(arg(0) ?? "", "trim threshold", 0...255))"
            if a.count > 1 {
                let color = try arg(1).map { (c) throws(AdapterError) in try hex(c, "trim colour") } ?? ""
                t += ":\(color)"
                if a.count > 2 { t += ":\(try bool(arg(2), "trim equal_hor") ? 1 : 0):\(try bool(arg(3), "trim equal_ver") ? 1 : 0)" }
            }
            trim = t
        case "padding":
            let top = try int(arg(0) ?? "0", "padding", 0...65_535)
            let right = try arg(1).map { (v) throws(AdapterError) in try int(v, "padding", 0...65_535) } ?? top
            let bottom = try arg(2).map { (v) throws(AdapterError) in try int(v, "padding", 0...65_535) } ?? top
            let left = try arg(3).map { (v) throws(AdapterError) in try int(v, "padding", 0...65_535) } ?? right
            padding = [top, right, bottom, left] == [0, 0, 0, 0] ? nil : "pad:\(top):\(right):\(bottom):\(left)"
        case "rotate":
            guard let r = arg(0), ["0", "90", "180", "270"].contains(r) else { throw AdapterError(adapter, "rotate must be 0, 90, 180 or 270") }
            rotate = r == "0" ? nil : "rot:\(r)"
        case "flip":
            let h = try bool(arg(0), "flip horizontal"), v = try bool(arg(1), "flip vertical")
            flip = h || v ? "flip:" + (h ? "h" : "") + (v ? "v" : "") : nil
        case "quality":
            let q = try int(arg(0) ?? "0", "quality", 0...100)
            request["q"] = q == 0 ? nil : "\(q)"
        case "format_quality": request["fq"] = try formatQuality(a)
        case "max_bytes":
            let n = try int(arg(0) ?? "0", "max_bytes", 0...100_000_000)
            request["mb"] = n == 0 ? nil : "\(n)"
        case "background": request["bg"] = try background(a)
        case "blur", "sharpen":
            let sigma = try AdaptedSource.decimal(arg(0) ?? "0", name, 0...50, adapter: adapter)
            request[name == "blur" ? "bl" : "sh"] = Double(sigma) == 0 ? nil : sigma
        case "watermark": watermarkOption = try readWatermark(a)
        case "strip_metadata": strip = try bool(arg(0), name)
        case "keep_copyright": keepCopyright = try bool(arg(0), name)
        case "strip_color_profile": request["icc"] = try bool(arg(0), name) ? "srgb" : "keep"
        case "auto_rotate": request["ar"] = try bool(arg(0), name) ? nil : "0"
        case "filename": request["fn"] = try filename(a)
        case "return_attachment": request["att"] = try bool(arg(0), name) ? "1" : nil
        case "expires":
            guard let t = arg(0), (1...11).contains(t.utf8.count), t.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                throw AdapterError(adapter, "expires must be a unix time in seconds")
            }
            request["exp"] = t
        case "cachebuster": request["cb"] = arg(0)
        case "preset":
            guard !a.isEmpty, a.allSatisfy({ !$0.isEmpty }) else { throw AdapterError(adapter, "preset needs a name") }
            request["pr"] = a.joined(separator: ":")
        case "format":
            let f = try formatName(arg(0) ?? "")
            if fromExtension { formatFromExtension = f } else { format = f }
        case "page": request["page"] = "\(try int(arg(0) ?? "", "page", 0...1023))"
        default: throw AdapterError.unsupported(adapter, [name])
        }
    }

    /// Kiln's options, in imgproxy's order of work.
    func nativeOptions() throws(AdapterError) -> [String] {
        var out: [String] = []
        if let trim { out.append(trim) }
        if let crop { out.append(crop) }
        if let rotate { out.append(rotate) }
        if let flip { out.append(flip) }
        if width > 0 || height > 0 {
            out.append("rs:\(width):\(height):\(resizingType)")
            if enlarge { out.append("el:1") }
            if extend { out.append("extend:\(width):\(height):\(extendGravity)") }
        }
        if let gravity { out.append("g:\(gravity)") }
        if let v = request["bl"] { out.append("bl:\(v)") }
        if let v = request["sh"] { out.append("sh:\(v)") }
        if let padding { out.append(padding) }
        if let watermarkOption { out.append(watermarkOption) }
        if let format, let formatFromExtension, format != formatFromExtension {
            throw AdapterError(adapter, "format \(format) and the extension .\(formatFromExtension) disagree")
        }
        if let f = formatFromExtension ?? format { out.append("f:\(f)") }
        switch (strip, keepCopyright) {
        case (false?, _): out.append("strip:0")
        case (_, true?): out.append("strip:copyright")
        case (true?, _): out.append("strip:1")
        default: break
        }
        for key in ["q", "fq", "mb", "bg", "icc", "ar", "dpr", "page", "pr", "exp", "cb", "att", "fn"] {
            if let v = request[key] { out.append("\(key):\(v)") }
        }
        return out
    }

    // MARK: - Arguments

    mutating func readResizingType(_ t: String) throws(AdapterError) {
        switch t {
        case "fit", "fill", "force", "auto": resizingType = t
        case "fill-down": throw AdapterError(adapter, "resizing type fill-down not supported: Kiln's fill keeps a smaller source whole (use fill)")
        default: throw AdapterError(adapter, "resizing type '\(t.prefix(20))' must be fit, fill, force or auto")
        }
    }

    mutating func readSize(_ a: [String]) throws(AdapterError) {
        if a.count > 0, !a[0].isEmpty { width = try int(a[0], "width", 0...65_535) }
        if a.count > 1, !a[1].isEmpty { height = try int(a[1], "height", 0...65_535) }
        if a.count > 2, !a[2].isEmpty { enlarge = try bool(a[2], "enlarge") }
        if a.count > 3, !a[3].isEmpty { extend = try bool(a[3], "extend") }
    }

    /// imgproxy's compass names as Kiln's.
    static let compass = ["no": "north", "so": "south", "ea": "east", "we": "west", "noea": "ne", "nowe": "nw",
                          "soea": "se", "sowe": "sw", "ce": "center"]

    func readGravity(_ a: [String]) throws(AdapterError) -> String {
        switch a.first ?? "" {
        case "sm":
            guard a.count == 1 else { throw AdapterError(adapter, "gravity sm takes no arguments") }
            return "smart"
        case "fp":
            guard a.count == 3 else { throw AdapterError(adapter, "gravity fp needs x and y") }
            return "fp:\(try AdaptedSource.decimal(a[1], "fp x", 0...1, adapter: adapter)):\(try AdaptedSource.decimal(a[2], "fp y", 0...1, adapter: adapter))"
        case let g:
            guard let c = ImgproxyOptions.compass[g] else {
                throw AdapterError(adapter, "gravity '\(g.prefix(20))' not supported: no, so, ea, we, noea, nowe, soea, sowe, ce, sm or fp:x:y")
            }
            guard a.dropFirst().allSatisfy({ $0.isEmpty || Double($0) == 0 }) else {
                throw AdapterError(adapter, "gravity offsets not supported: Kiln's gravity is a compass point or a focal point (fp:x:y)")
            }
            return c
        }
    }

    func readWatermark(_ a: [String]) throws(AdapterError) -> String? {
        let opacity = try AdaptedSource.decimal(a.first ?? "", "watermark opacity", 0...1, adapter: adapter)
        guard Double(opacity) != 0 else { return nil }
        guard let watermark else { throw AdapterError(adapter, "wm needs adapters.imgproxy_watermark (the [watermarks] entry to draw)") }
        let position = a.count > 1 && !a[1].isEmpty ? a[1] : "ce"
        guard let kiln = position == "re" ? "tile" : ImgproxyOptions.compass[position] else {
            throw AdapterError(adapter, "watermark position '\(position.prefix(20))' must be ce, no, so, ea, we, noea, nowe, soea, sowe or re")
        }
        let x = try int(a.count > 2 && !a[2].isEmpty ? a[2] : "0", "watermark x offset", 0...65_535)
        let y = try int(a.count > 3 && !a[3].isEmpty ? a[3] : "0", "watermark y offset", 0...65_535)
        let scale = try AdaptedSource.decimal(a.count > 4 && !a[4].isEmpty ? a[4] : "0", "watermark scale", 0...1, adapter: adapter)
        return "wm:\(watermark):\(opacity):\(kiln):\(x):\(y):\(scale)"
    }

    func background(_ a: [String]) throws(AdapterError) -> String? {
        switch a.filter({ !$0.isEmpty }).count {
        case 0: return nil
        case 1: return try hex(a[0], "background")
        case 3:
            let rgb = try a.map { (v) throws(AdapterError) in try int(v, "background", 0...255) }
            let digits = Array("0123456789abcdef")
            return rgb.map { String([digits[$0 >> 4], digits[$0 & 15]]) }.joined()
        default: throw AdapterError(adapter, "background must be r:g:b or a hex colour")
        }
    }

    func formatQuality(_ a: [String]) throws(AdapterError) -> String {
        guard !a.isEmpty, a.count % 2 == 0 else { throw AdapterError(adapter, "format_quality needs format:quality pairs") }
        var parts: [String] = []
        for i in stride(from: 0, to: a.count, by: 2) {
            parts.append(try formatName(a[i]))
            parts.append("\(try int(a[i + 1], "format_quality", 1...100))")
        }
        return parts.joined(separator: ":")
    }

    func filename(_ a: [String]) throws(AdapterError) -> String {
        var name = a.first ?? ""
        if a.count > 1, try bool(a[1], "filename encoded") {
            guard let bytes = Base64URL.decode(name.prefix { $0 != "=" }, canonical: false), let decoded = String(validating: bytes, as: UTF8.self) else {
                throw AdapterError(adapter, "filename is not URL-safe base64 of UTF-8")
            }
            name = decoded
        }
        guard !name.isEmpty, !name.unicodeScalars.contains("/"), !name.utf8.contains(0) else { throw AdapterError(adapter, "filename must be a name without /") }
        return name
    }

    func formatName(_ f: String) throws(AdapterError) -> String {
        switch f.lowercased() {
        case "jpg", "jpeg": return "jpeg"
        case "png", "webp", "avif", "gif", "ico": return f.lowercased()
        case "best": throw AdapterError(adapter, "format best not supported: use f:auto on a native URL, or name the format")
        default: throw AdapterError(adapter, "format '\(f.prefix(20))' not supported (jpg, png, webp, avif, gif or ico)")
        }
    }

    func int(_ v: String, _ what: String, _ range: ClosedRange<Int>) throws(AdapterError) -> Int {
        try AdaptedSource.integer(v, what, range, adapter: adapter)
    }

    func hex(_ v: String, _ what: String) throws(AdapterError) -> String {
        guard !v.hasPrefix("#"), let c = AdaptedSource.hexColor(v) else { throw AdapterError(adapter, "\(what) '\(v.prefix(20))' must be a hex colour") }
        return c
    }

    /// imgproxy's booleans: `1`, `t`, `true` / `0`, `f`, `false`; an absent one is false.
    func bool(_ v: String?, _ what: String) throws(AdapterError) -> Bool {
        switch v ?? "0" {
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw AdapterError(adapter, "\(what) must be 1, t, true, 0, f or false")
        }
    }
}
