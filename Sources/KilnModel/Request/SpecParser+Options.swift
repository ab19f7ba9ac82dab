/// The options of the URL grammar: one case per option name (and its aliases).
extension SpecParser {
    /// Sigmas below this (`bl:`, `sh:`) change no pixel: the Gaussian's weight one pixel away is
    /// below 2e-22, so the step is dropped from the request (it shares the cache key of the URL
    /// without it). Tiny sigmas then never reach the kernel, where a sigma whose square
    /// underflows would divide 0 by 0 and paint the image black.
    public static let minimumSigma = 0.1

    /// The largest `max_bytes:` (100 MB; `limits.max_output_bytes` caps every result anyway).
    public static let maxBytesLimit = 100_000_000

    /// Applies one segment; false when the segment is not an option (the path starts here).
    func parseOption(_ segment: String, into b: inout RequestBuilder, presetDepth: Int) throws(SpecError) -> Bool {
        let fields = segment.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let a = OptionArguments(segment: segment, args: Array(fields.dropFirst()))
        let dims = 0...maxDimension
        switch fields[0] {
        case "resize", "rs":
            try a.arity(2...3)
            var mode = ResizeMode.fit
            if a.count == 3 {
                guard let m = ResizeMode(rawValue: a[2]) else { throw a.invalid("mode must be fit, fill or force") }
                mode = m
            }
            b.setResize(width: try a.int(0, "width", dims), height: try a.int(1, "height", dims), mode: mode)
            b.autoWidth = false
        case "width", "w":
            try a.arity(1...1)
            if a[0] == "auto" {
                // The width of the device's slot (Client Hints); implies `ch:1`.
                b.setResize(width: 0, height: nil, mode: nil)
                b.autoWidth = true
            } else {
                b.setResize(width: try a.int(0, "width", dims), height: nil, mode: nil)
                b.autoWidth = false
            }
        case "clienthints", "ch":
            try a.arity(1...1)
            b.clientHints = try a.flag(0, "clienthints")
        case "height", "h":
            try a.arity(1...1)
            b.setResize(width: nil, height: try a.int(0, "height", dims), mode: nil)
        case "enlarge", "el":
            try a.arity(1...1)
            b.enlarge = try a.flag(0, "enlarge")
        case "gravity", "g":
            guard let g = Gravity.parse(a.args[...]) else { throw a.invalid(Self.gravityHelp) }
            b.gravity = g
        case "dpr":
            try a.arity(1...1)
            b.dpr = try a.double(0, "dpr", 1...4)
            b.dprGiven = true
        case "crop":
            try a.arity(2...5)
            let w = try a.int(0, "width", 1...maxDimension), h = try a.int(1, "height", 1...maxDimension)
            if a.count == 4, a[2] != "fp" {
                b.append(.crop(CropOptions(width: w, height: h, x: try a.int(2, "x", dims), y: try a.int(3, "y", dims))))
            } else if a.count >= 3 {
                guard let g = Gravity.parse(a.args[2...]) else { throw a.invalid(Self.gravityHelp) }
                b.append(.crop(CropOptions(width: w, height: h, gravity: g)))
            } else {
                b.appendCropWithRequestGravity(CropOptions(width: w, height: h))
            }
        case "pad", "padding":
            try a.arity(1...4)
            let v = try (0..<a.count).map { (i) throws(SpecError) in try a.int(i, "padding", dims) }
            guard a.count != 3 else { throw a.invalid("takes 1, 2 or 4 values (all; vertical:horizontal; top:right:bottom:left)") }
            let (t, r, bo, l) = a.count == 1 ? (v[0], v[0], v[0], v[0]) : a.count == 2 ? (v[0], v[1], v[0], v[1]) : (v[0], v[1], v[2], v[3])
            b.append(.pad(Padding(top: t, right: r, bottom: bo, left: l)))
        case "trim", "t":
            try a.arity(1...4)
            guard b.trim == nil else { throw a.invalid("given twice") }
            var trim = TrimOptions(threshold: try a.int(0, "threshold", 0...255))
            if a.count >= 2, !a[1].isEmpty { trim.color = try a.color(1) }
            if a.count >= 3 { trim.equalHorizontal = try a.flag(2, "equal_h") }
            if a.count >= 4 { trim.equalVertical = try a.flag(3, "equal_v") }
            b.trim = trim
        case "max_bytes", "mb":
            try a.arity(1...1)
            b.output.maxBytes = try a.int(0, "max_bytes", 1...Self.maxBytesLimit)
        case "background", "bg":
            try a.arity(1...1)
            b.output.background = try a.color(0)
        case "circle":
            try a.arity(0...1)
            b.append(.circle(background: a.count == 1 ? try a.color(0) : nil))
        case "rounded", "rc":
            try a.arity(1...1)
            b.append(.rounded(radius: try a.int(0, "radius", 1...maxDimension)))
        case "blur", "bl":
            try a.arity(1...1)
            let sigma = try a.sigma(0, max: maxSigma)
            if sigma >= Self.minimumSigma { b.append(.blur(sigma: sigma)) }
        case "sharpen", "sh":
            try a.arity(1...1)
            let sigma = try a.sigma(0, max: maxSigma)
            if sigma >= Self.minimumSigma { b.append(.sharpen(sigma: sigma)) }
        case "grayscale", "greyscale", "gs":
            try a.arity(0...0)
            b.append(.grayscale)
        case "sepia":
            try a.arity(0...0)
            b.append(.sepia)
        case "tint":
            try a.arity(1...1)
            b.append(.tint(try a.color(0)))
        case "brightness", "br":
            try a.arity(1...1)
            b.append(.brightness(try a.int(0, "brightness", -100...100)))
        case "contrast", "co":
            try a.arity(1...1)
            b.append(.contrast(try a.int(0, "contrast", -100...100)))
        case "saturation", "sa":
            try a.arity(1...1)
            b.append(.saturation(try a.int(0, "saturation", -100...100)))
        case "rotate", "rot":
            try a.arity(1...1)
            guard let d = NumberGrammar.integer(a[0]), [0, 90, 180, 270, 360].contains(d) else { throw a.invalid("angle must be 90, 180 or 270") }
            if d % 360 != 0 { b.append(.rotate(degrees: d)) }
        case "flip":
            try a.arity(1...1)
            guard let f = FlipDirection(rawValue: a[0] == "vh" ? "hv" : a[0]) else { throw a.invalid("direction must be h, v or hv") }
            b.append(.flip(f))
        case "autorotate", "ar":
            try a.arity(1...1)
            b.autorotate = try a.flag(0, "autorotate")
        case "quality", "q":
            try a.arity(1...1)
            b.output.quality = try a.int(0, "quality", 1...100)
        case "format", "f", "ext":
            try a.arity(1...1)
            b.output.document = nil
            switch a[0] {
            case "auto": b.output.format = .auto
            case "jpg": b.output.format = .format(.jpeg)
            case "json", "blurhash", "thumbhash":
                b.output.format = .source
                b.output.document = DocumentKind(rawValue: a[0])
            default:
                guard let f = ImageFormat(rawValue: a[0]) else { throw a.invalid("format must be jpeg, png, webp, avif, auto, json, blurhash or thumbhash") }
                guard f.isEncodable else {
                    throw a.invalid(f == .gif ? "Kiln reads GIF but does not write it; use webp (animated) or png/jpeg (one frame)"
                                              : "Kiln reads \(f.displayName) but does not write it; use jpeg, png, webp or avif")
                }
                b.output.format = .format(f)
            }
        case "placeholders", "ph":
            try a.arity(1...1)
            b.output.placeholders = try a.flag(0, "placeholders")
        case "blurhash", "bh":
            try a.arity(2...2)
            let c = BlurHashComponents(x: try a.int(0, "x components", 1...9), y: try a.int(1, "y components", 1...9))
            b.output.blurhash = c == .standard ? nil : c
        case "frame":
            try a.arity(1...1)
            b.output.frame = try a.int(0, "frame", 0...1_000_000)
        case "progressive", "pg":
            try a.arity(1...1)
            b.output.progressive = try a.flag(0, "progressive")
        case "lossless", "ll":
            try a.arity(1...1)
            b.output.lossless = try a.flag(0, "lossless")
        case "strip":
            try a.arity(1...1)
            b.output.strip = try a.flag(0, "strip")
        case "watermark", "wm":
            try a.arity(1...6)
            guard watermarks.contains(a[0]) else {
                throw a.invalid(watermarks.isEmpty ? "no watermarks are configured ([watermarks])" : "no watermark named \"\(a[0])\"")
            }
            var w = WatermarkOptions(name: a[0])
            if a.count > 1 { w.opacity = Self.quantized(try a.double(1, "opacity", 0...1)) }
            if a.count > 2 {
                guard let p = WatermarkOptions.position(a[2]) else {
                    throw a.invalid("position must be center, north, south, east, west, ne, nw, se, sw or tile")
                }
                w.position = p
            }
            guard a.count != 4 else { throw a.invalid("takes x and y together") }
            if a.count > 4 {
                let offsets = w.position == .tile ? dims : -maxDimension...maxDimension
                w.x = try a.int(3, "x", offsets)
                w.y = try a.int(4, "y", offsets)
            }
            if a.count > 5 { w.scale = Self.quantized(try a.double(5, "scale", 0...1)) }
            b.appendWatermark(w)
        case "preset", "pr":
            try expandPresets(a.args, segment: segment, into: &b, presetDepth: presetDepth)
        case "expires", "exp":
            try a.arity(1...1)
            guard presetDepth == 0 else { throw a.invalid("an expiry belongs in the URL, not in a preset") }
            guard b.expires == nil else { throw a.invalid("given twice") }
            // Decimal digits only (unix seconds need 10; at most 12, year 33658).
            let digits = a[0].utf8
            guard (1...12).contains(digits.count), digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let t = Int64(a[0]) else { throw a.invalid("must be a unix time in seconds") }
            b.expires = t
        case "cachebuster", "cb":
            try a.arity(1...1)
            guard b.version == nil else { throw a.invalid("given twice") }
            let token = a[0].utf8
            guard (1...64).contains(token.count), token.allSatisfy({ c in
                (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "-") || c == UInt8(ascii: "~")
            }) else { throw a.invalid("must be 1 to 64 letters, digits, '.', '_', '-' or '~'") }
            b.version = a[0]
        case "filename", "fn":
            // Everything after the first colon, colons included: the name is free text.
            let name = String(segment.dropFirst(fields[0].count + 1))
            guard !name.isEmpty else { throw a.invalid("missing file name") }
            guard name.utf8.count <= DownloadOptions.maxFilenameBytes else {
                throw a.invalid("file name longer than \(DownloadOptions.maxFilenameBytes) bytes")
            }
            b.download.filename = name
        case "attachment", "att":
            try a.arity(1...1)
            b.download.attachment = try a.flag(0, "attachment")
        default:
            let name = fields[0]
            if let resolver = customResolver, let custom = try resolver(name, a.args) {
                b.append(.custom(custom))
                return true
            }
            if fields.count > 1, !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "_" }) {
                throw .unknownOption(segment: segment)
            }
            return false
        }
        return true
    }

    /// Every built-in option name and alias: its canonical option name and, for options that add
    /// a processing step, the operation's name (`security.allowed_operations` lists those).
    /// `OptionPolicy` reads it; an option missing here counts as an operation of its own name,
    /// so a new option is refused by an allow-list until it is added.
    static let optionNames: [String: OptionName] = {
        var table: [String: OptionName] = [:]
        func add(_ names: [String], _ option: String, operation: String?) {
            for n in names { table[n] = OptionName(option: option, operation: operation) }
        }
        add(["resize", "rs"], "resize", operation: "resize")
        add(["width", "w"], "width", operation: "resize")
        add(["height", "h"], "height", operation: "resize")
        add(["crop"], "crop", operation: "crop")
        add(["pad", "padding"], "pad", operation: "pad")
        add(["circle"], "circle", operation: "circle")
        add(["rounded", "rc"], "rounded", operation: "rounded")
        add(["blur", "bl"], "blur", operation: "blur")
        add(["sharpen", "sh"], "sharpen", operation: "sharpen")
        add(["grayscale", "greyscale", "gs"], "grayscale", operation: "grayscale")
        add(["sepia"], "sepia", operation: "sepia")
        add(["tint"], "tint", operation: "tint")
        add(["brightness", "br"], "brightness", operation: "brightness")
        add(["contrast", "co"], "contrast", operation: "contrast")
        add(["saturation", "sa"], "saturation", operation: "saturation")
        add(["rotate", "rot"], "rotate", operation: "rotate")
        add(["flip"], "flip", operation: "flip")
        add(["watermark", "wm"], "watermark", operation: "watermark")
        add(["trim", "t"], "trim", operation: "trim")
        add(["enlarge", "el"], "enlarge", operation: nil)
        add(["gravity", "g"], "gravity", operation: nil)
        add(["dpr"], "dpr", operation: nil)
        add(["clienthints", "ch"], "clienthints", operation: nil)
        add(["background", "bg"], "background", operation: nil)
        add(["autorotate", "ar"], "autorotate", operation: nil)
        add(["quality", "q"], "quality", operation: nil)
        add(["format", "f", "ext"], "format", operation: nil)
        add(["frame"], "frame", operation: nil)
        add(["placeholders", "ph"], "placeholders", operation: nil)
        add(["blurhash", "bh"], "blurhash", operation: nil)
        add(["progressive", "pg"], "progressive", operation: nil)
        add(["lossless", "ll"], "lossless", operation: nil)
        add(["strip"], "strip", operation: nil)
        add(["max_bytes", "mb"], "max_bytes", operation: nil)
        add(["preset", "pr"], "preset", operation: nil)
        add(["expires", "exp"], "expires", operation: nil)
        add(["cachebuster", "cb"], "cachebuster", operation: nil)
        add(["filename", "fn"], "filename", operation: nil)
        add(["attachment", "att"], "attachment", operation: nil)
        return table
    }()

    /// The canonical option name of `name` (an alias or long name); unknown names stay as they are.
    public static func canonicalOptionName(_ name: String) -> String {
        optionNames[name]?.option ?? name
    }

    /// The operation `name` runs: `resize` for `w`, nil for request-wide options such as `q`;
    /// an unknown name (a custom processor) is its own operation.
    public static func operationName(_ name: String) -> String? {
        guard let known = optionNames[name] else { return name }
        return known.operation
    }

    /// A fraction rounded to the four decimals `canonical` spells, so that the key's text and
    /// the pixels agree (`wm:` opacity and scale).
    static func quantized(_ v: Double) -> Double {
        (v * 10_000).rounded() / 10_000
    }

    static let gravityHelp = "gravity must be center, north, south, east, west, ne, nw, se, sw, smart or fp:<x>:<y> with x and y in 0...1"
}

/// An option's canonical name and the operation it adds (nil: a request-wide option).
struct OptionName: Sendable {
    let option: String
    let operation: String?
}

/// The arguments of one option segment, with typed accessors that name the segment on error.
struct OptionArguments {
    let segment: String
    let args: [String]

    var count: Int { args.count }
    subscript(i: Int) -> String { args[i] }

    func invalid(_ reason: String) -> SpecError { .invalidOption(segment: segment, reason: reason) }

    func arity(_ allowed: ClosedRange<Int>) throws(SpecError) {
        guard allowed.contains(args.count) else {
            let n = allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed.lowerBound) to \(allowed.upperBound)"
            throw invalid("takes \(n) argument(s)")
        }
    }

    func int(_ i: Int, _ what: String, _ range: ClosedRange<Int>) throws(SpecError) -> Int {
        guard i < args.count else { throw invalid("missing \(what)") }
        guard let v = NumberGrammar.integer(args[i]), range.contains(v) else {
            throw invalid("\(what) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    func double(_ i: Int, _ what: String, _ range: ClosedRange<Double>) throws(SpecError) -> Double {
        guard i < args.count else { throw invalid("missing \(what)") }
        guard let v = NumberGrammar.decimal(args[i]), v.isFinite, range.contains(v) else {
            throw invalid("\(what) must be a number in \(Gravity.format(range.lowerBound))...\(Gravity.format(range.upperBound))")
        }
        return v
    }

    /// A Gaussian sigma: more than 0 and at most `max`.
    func sigma(_ i: Int, max: Double) throws(SpecError) -> Double {
        guard let v = NumberGrammar.decimal(args[i]), v.isFinite, v > 0, v <= max else {
            throw invalid("sigma must be a number above 0 and at most \(Gravity.format(max))")
        }
        return v
    }

    func flag(_ i: Int, _ what: String) throws(SpecError) -> Bool {
        try int(i, what, 0...1) == 1
    }

    func color(_ i: Int) throws(SpecError) -> RGBColor {
        guard let c = RGBColor(hex: args[i]) else { throw invalid("colour must be six hex digits such as ff8800") }
        return c
    }
}
