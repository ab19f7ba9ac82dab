import KilnModel

/// thumbor's `watermark(image,x,y,alpha[,w_ratio[,h_ratio]])` as Kiln's named watermark
/// `wm:<name>:<opacity>:<position>:<x>:<y>:<scale>`. The image is the name of a watermark
/// configured in Kiln's `[watermarks]` (Kiln fetches no watermark from a URL).
///
/// - `x`: `n` is n px from the left edge, `-n` the mark's right edge n px from the right,
///   `center` centred; `y` the same from the top and bottom (thumbor's `watermark.py`).
/// - `alpha`: thumbor's transparency 0 (opaque) to 100; Kiln's opacity is 1 − alpha/100.
/// - `w_ratio`: the mark's width as a percentage of the image's: Kiln's scale (a fraction).
///
/// Refused: `repeat` (thumbor spreads the copies over the image; Kiln tiles at a fixed gap),
/// positions in percent (`10p`), `h_ratio` (a box that needs the mark's size), URLs.
enum ThumborWatermark {
    static func option(_ a: [String], adapter: String) throws(AdapterError) -> String {
        guard (4...6).contains(a.count) else { throw AdapterError(adapter, "watermark() takes 4 to 6 arguments") }
        var name = a[0]
        if name.count >= 2, name.hasPrefix("'"), name.hasSuffix("'") { name = String(name.dropFirst().dropLast()) }
        if name.contains("/") || name.contains(":") {
            throw AdapterError(adapter, "watermark(\(name.prefix(60)),…): the image is a URL or path; Kiln blends only the watermarks "
                + "configured in [watermarks]: name one")
        }
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ ThumborURL.isBase64URL($0) || $0 == UInt8(ascii: ".") }) else {
            throw AdapterError(adapter, "watermark name '\(name.prefix(40))' must be a [watermarks] name (letters, digits, '.', '_', '-')")
        }
        let (h, x) = try axis(a[1], "x", low: "w", high: "e", adapter: adapter)
        let (v, y) = try axis(a[2], "y", low: "n", high: "s", adapter: adapter)
        let alpha = try AdaptedSource.integer(a[3], "watermark alpha", 0...100, adapter: adapter)
        var scale = 0
        if a.count > 4, a[4] != "none" {
            scale = try AdaptedSource.integer(a[4], "watermark w_ratio", 0...100, adapter: adapter)
        }
        if a.count > 5, a[5] != "none" {
            throw AdapterError(adapter, "watermark h_ratio not supported: Kiln scales the mark by a fraction of the width only (w_ratio)")
        }
        let position: String
        switch (v, h) {
        case ("", ""): position = "center"
        case ("n", ""): position = "north"
        case ("s", ""): position = "south"
        case ("", "w"): position = "west"
        case ("", "e"): position = "east"
        default: position = v + h
        }
        let opacity = ThumborFilters.format(Double(100 - alpha) / 100)
        let fraction = ThumborFilters.format(Double(scale) / 100)
        return "wm:\(name):\(opacity):\(position):\(x):\(y):\(fraction)"
    }

    /// One axis: (compass letter or "" for centred, offset from that edge).
    static func axis(_ s: String, _ what: String, low: String, high: String, adapter: String) throws(AdapterError) -> (String, Int) {
        switch s {
        case "center": return ("", 0)
        case "repeat":
            throw AdapterError(adapter, "watermark \(what)=repeat not supported: thumbor spreads the copies over the image; Kiln's tile repeats at a fixed gap")
        default:
            if s.hasSuffix("p") {
                throw AdapterError(adapter, "watermark \(what)=\(s.prefix(20)) not supported: Kiln places marks in pixels, not percent")
            }
            let negative = s.hasPrefix("-")
            let n = try AdaptedSource.integer(negative ? String(s.dropFirst()) : s, "watermark \(what)", 0...16_384, adapter: adapter)
            return (negative ? high : low, n)
        }
    }
}
