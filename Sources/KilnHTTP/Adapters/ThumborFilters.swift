import KilnModel

/// thumbor's `filters:name(args):name(args)…` as Kiln's options, each filter checked as thumbor
/// 7.8 reads it (`thumbor/filters/*.py`). Filters that change the resize (`no_upscale`,
/// `upscale`, `stretch`) and the background (`fill`, `round_corner`) are kept as flags for
/// `ThumborAdapter`; the others become options in the order written (thumbor runs them after
/// the resize, in that order). Where thumbor's numbers mean something else than Kiln's, they
/// are converted (`contrast`, `blur`, `rotate`, `watermark`'s alpha).
struct ThumborFilters {
    /// Options written in the filters' order (after the geometry).
    var options: [String] = []
    var noUpscale = false
    var upscale = false
    var stretch = false
    /// `fill(<colour>)` or `round_corner`'s colour as Kiln's `bg:` hex.
    var background: String?
    /// `fill(…)` given (a fill pads a fit-in image to the box).
    var fill = false
    /// The filter names, in order.
    var names: [String] = []

    let adapter: String

    /// Why Kiln refuses some of thumbor's filters; the accepted ones (other names are unknown: 400).
    static let refusals = ThumborAdapter.filterParameters.refusals
    static let known = ThumborAdapter.filterParameters.accepted

    init(_ text: String, adapter: String) throws(AdapterError) {
        self.adapter = adapter
        // As thumbor's FiltersFactory: split at "):", each part `name(args` (the last `name(args)`).
        let parts = text.split(separator: "):", omittingEmptySubsequences: false)
        var calls: [(String, [String])] = []
        for (i, raw) in parts.enumerated() {
            let part = i == parts.count - 1 ? raw : raw + ")"
            guard let open = part.firstIndex(of: "("), part.hasSuffix(")") else {
                throw AdapterError(adapter, "filter '\(part.prefix(40))' is not name(arguments)")
            }
            let name = String(part[..<open])
            let inner = part[part.index(after: open)..<part.index(before: part.endIndex)]
            let args = inner.isEmpty ? [] : inner.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0.trimmingPrefix(while: { $0 == " " }).reversed().drop { $0 == " " }.reversed()) }
            calls.append((name, args))
        }
        names = calls.map(\.0)
        if let refused = names.first(where: { ThumborFilters.refusals[$0] != nil }) {
            throw AdapterError(adapter, "not supported: '\(refused)' (\(ThumborFilters.refusals[refused]!))")
        }
        let unknown = names.filter { !ThumborFilters.known.contains($0) }
        guard unknown.isEmpty else { throw AdapterError(adapter, "unknown filters: \(unknown.map { "'\($0.prefix(30))'" }.joined(separator: ", "))") }
        for (name, args) in calls { try apply(name, args) }
    }

    /// One filter.
    mutating func apply(_ name: String, _ a: [String]) throws(AdapterError) {
        func arity(_ range: ClosedRange<Int>) throws(AdapterError) {
            guard range.contains(a.count) else {
                throw AdapterError(adapter, "\(name)() takes \(range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)") arguments")
            }
        }
        switch name {
        case "quality":
            try arity(1...1)
            options.append("q:\(try AdaptedSource.integer(a[0], "quality", 1...100, adapter: adapter))")
        case "format":
            try arity(1...1)
            switch a[0].lowercased() {
            case "jpeg", "jpg": options.append("f:jpeg")
            case "png", "webp", "gif", "avif": options.append("f:\(a[0].lowercased())")
            case "heic", "heif": throw AdapterError(adapter, "format(\(a[0])) not supported: Kiln reads HEIC but does not write it")
            default: throw AdapterError(adapter, "format(\(a[0].prefix(20))) not supported (jpeg, png, webp, gif or avif)")
            }
        case "blur":
            try arity(1...2)
            let radius = try AdaptedSource.integer(a[0], "blur radius", 1...999_999, adapter: adapter)
            let sigma = a.count > 1 ? try ThumborFilters.decimal(a[1], "blur sigma", adapter) : 0
            // A kernel narrower than a hundredth of a pixel blurs nothing (thumbor's blur(1,0.01)).
            let deviation = ThumborFilters.format(ThumborFilters.blurSigma(radius: radius, sigma: sigma))
            if deviation != "0" { options.append("bl:\(deviation)") }
        case "grayscale":
            try arity(0...0)
            options.append("gs")
        case "brightness":
            try arity(1...1)
            options.append("br:\(try signed(a[0], "brightness", -100...100))")
        case "contrast":
            try arity(1...1)
            options.append("co:\(ThumborFilters.contrast(try signed(a[0], "contrast", -100...100)))")
        case "round_corner":
            try roundCorner(a)
        case "fill":
            try arity(1...2)
            fill = true
            switch a[0].lowercased() {
            case "transparent": break
            case "auto", "blur": throw AdapterError(adapter, "fill(\(a[0])) not supported: Kiln fills with a given colour, not the image's median or a blur")
            default: try setBackground(try ThumborFilters.color(a[0], adapter))
            }
        case "no_upscale":
            try arity(0...0)
            noUpscale = true
        case "upscale":
            try arity(0...0)
            upscale = true
        case "stretch":
            try arity(0...0)
            stretch = true
        case "rotate":
            try arity(1...1)
            let degrees = try signed(a[0], "rotate", -3600...3600)
            // thumbor (PIL) turns counter-clockwise, Kiln clockwise.
            guard degrees % 90 == 0 else {
                throw AdapterError(adapter, "rotate(\(degrees)) not supported: Kiln rotates by quarter turns (90, 180, 270)")
            }
            let clockwise = (360 - ((degrees % 360) + 360) % 360) % 360
            if clockwise != 0 { options.append("rot:\(clockwise)") }
        case "strip_exif":
            try arity(0...0)
            options.append("strip:1")
        case "strip_icc":
            try arity(0...0)
            options.append("icc:srgb")
        case "max_bytes":
            try arity(1...1)
            guard (1...9).contains(a[0].utf8.count), a[0].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(a[0]),
                  (1...100_000_000).contains(n) else {
                throw AdapterError(adapter, "max_bytes(\(a[0].prefix(20))) must be a whole number in 1...100000000")
            }
            options.append("mb:\(n)")
        case "watermark":
            options.append(try ThumborWatermark.option(a, adapter: adapter))
        default:
            throw AdapterError(adapter, "unknown filters: '\(name.prefix(30))'")
        }
    }

    /// `round_corner(a|b,r,g,b[,transparent])`: Kiln's one radius; the corners' colour as `bg:`
    /// (Kiln's corners are transparent and take the colour where the output has no alpha).
    mutating func roundCorner(_ a: [String]) throws(AdapterError) {
        guard (4...5).contains(a.count) else { throw AdapterError(adapter, "round_corner() takes 4 or 5 arguments") }
        let radii = a[0].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(radii.count) else { throw AdapterError(adapter, "round_corner radius \(a[0].prefix(20)) must be a or a|b") }
        let r = try AdaptedSource.integer(radii[0], "round_corner radius", 0...999_999, adapter: adapter)
        if radii.count == 2, try AdaptedSource.integer(radii[1], "round_corner radius", 0...999_999, adapter: adapter) != r {
            throw AdapterError(adapter, "round_corner(\(a[0].prefix(20)),…) not supported: Kiln's corners are circular (one radius)")
        }
        var rgb: [Int] = []
        for c in a[1...3] { rgb.append(try AdaptedSource.integer(c, "round_corner colour", 0...255, adapter: adapter)) }
        let transparent = a.count == 5 ? try ThumborFilters.boolean(a[4], adapter) : false
        guard r > 0 else { return }  // thumbor draws no corner of radius 0
        options.append("rc:\(r)")
        if !transparent { try setBackground(rgb.map { hex2($0) }.joined()) }
    }

    mutating func setBackground(_ hex: String) throws(AdapterError) {
        guard background == nil || background == hex else {
            throw AdapterError(adapter, "two background colours (fill, round_corner): Kiln has one bg:")
        }
        background = hex
    }

    func signed(_ s: String, _ what: String, _ range: ClosedRange<Int>) throws(AdapterError) -> Int {
        let negative = s.hasPrefix("-")
        let n = try AdaptedSource.integer(negative ? String(s.dropFirst()) : s, what, 0...999_999, adapter: adapter)
        let value = negative ? -n : n
        guard range.contains(value) else {
            throw AdapterError(adapter, "\(what)(\(s.prefix(20))) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// thumbor's contrast multiplies by ((k + 100)² / 100) / 100 (integer division, as its C);
    /// Kiln's `co:` by 1 + k/100 at and below 0, 1 + 3k/100 above: the nearest Kiln value.
    static func contrast(_ k: Int) -> Int {
        let factor = Double((k + 100) * (k + 100) / 100) / 100
        let kiln = factor <= 1 ? (factor - 1) * 100 : (factor - 1) * 100 / 3
        return Int(kiln.rounded())
    }

    /// thumbor's blur is a Gaussian of `sigma` (the radius when 0) cut at `radius` (at most 150)
    /// and normalised: Kiln's `bl:` gets the standard deviation of that kernel.
    static func blurSigma(radius: Int, sigma: Double) -> Double {
        let s = sigma == 0 ? Double(radius) : sigma
        let r = min(radius, 150)
        var sum = 0.0, moment = 0.0
        for x in -r...r {
            let w = ThumborFilters.exponential(-Double(x * x) / (2 * s * s))
            sum += w
            moment += Double(x * x) * w
        }
        return sum > 0 ? (moment / sum).squareRoot() : 0
    }

    /// e^x for x ≤ 0 (the standard library has no `exp`): a 20-term series on x/n, raised to
    /// the n-th power; ample for a kernel's weights.
    static func exponential(_ x: Double) -> Double {
        guard x > -700 else { return 0 }
        let n = max(1, Int((-x).rounded(.up)))
        let y = x / Double(n)
        var term = 1.0, sum = 1.0
        for k in 1...20 {
            term *= y / Double(k)
            sum += term
        }
        var result = 1.0
        for _ in 0..<n { result *= sum }
        return result
    }

    /// Two decimals at most, without trailing zeros (`1.5`, `0.74`, `3`).
    static func format(_ d: Double) -> String {
        let hundredths = Int((d * 100).rounded())
        let whole = hundredths / 100, fraction = hundredths % 100
        if fraction == 0 { return "\(whole)" }
        return fraction % 10 == 0 ? "\(whole).\(fraction / 10)" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    static func decimal(_ s: String, _ what: String, _ adapter: String) throws(AdapterError) -> Double {
        let magnitude = s.hasPrefix("-") ? String(s.dropFirst()) : s
        let d = Double(try AdaptedSource.decimal(magnitude, what, 0...1000, adapter: adapter)) ?? 0
        return d
    }

    static func boolean(_ s: String, _ adapter: String) throws(AdapterError) -> Bool {
        switch s {
        case "true", "True", "1": return true
        case "false", "False", "0": return false
        default: throw AdapterError(adapter, "'\(s.prefix(20))' must be true or false")
        }
    }

    /// `fill`'s colour: hex (3 or 6 digits, no `#`) or `white`/`black`.
    static func color(_ s: String, _ adapter: String) throws(AdapterError) -> String {
        switch s.lowercased() {
        case "white": return "ffffff"
        case "black": return "000000"
        default:
            guard !s.hasPrefix("#"), let hex = AdaptedSource.hexColor(s) else {
                throw AdapterError(adapter, "fill(\(s.prefix(20))) not supported: Kiln takes a hex colour (fff, ff8800), white, black or transparent")
            }
            return hex
        }
    }
}

private func hex2(_ n: Int) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[n / 16], digits[n % 16]])
}
