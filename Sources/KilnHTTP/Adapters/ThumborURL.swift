import KilnModel

/// A thumbor URL taken apart by thumbor 7.8's grammar (libthumbor's `Url.regex`), on the raw
/// (percent-encoded) path, the parts in thumbor's fixed order, each optional:
///
///     /unsafe|<hmac>/[debug/][meta/][trim[:top-left|bottom-right][:tolerance]/][AxB:CxD/]
///     [adaptive-][full-]fit-in/][-]Wx[-]H/[left|right|center/][top|middle|bottom/][smart/]
///     [filters:name(args):name(args)…/]<image>
///
/// Only the shape is read here; what the parts mean in Kiln's options is `ThumborAdapter`'s.
struct ThumborURL {
    /// `unsafe`, or the signature segment as written (`%3D` for `=` possibly).
    enum Authority: Equatable {
        case unsafe
        case signed(signature: String)
    }

    /// A requested side: none (`0` or empty: from the aspect ratio), pixels, or `orig`.
    enum Side: Equatable {
        case pixels(Int)
        case orig

        /// 0 for none, nil for `orig`.
        var pixels: Int? {
            if case .pixels(let n) = self { return n }
            return nil
        }
    }

    /// `fit-in` and its variants.
    enum Fit: String, Equatable {
        case fitIn = "fit-in"
        case adaptive = "adaptive-fit-in"
        case full = "full-fit-in"
        case adaptiveFull = "adaptive-full-fit-in"
    }

    var authority: Authority
    /// Everything after `/<unsafe or signature>/`, raw: what thumbor's signature covers.
    var signed: Substring
    var debug = false
    var meta = false
    /// `trim`: its first word (the position) and its tolerance, each nil when absent.
    var trim: (position: Substring?, tolerance: Int?)?
    /// `AxB:CxD`: left, top, right, bottom.
    var crop: (left: Int, top: Int, right: Int, bottom: Int)?
    var fit: Fit?
    var width = Side.pixels(0)
    var height = Side.pixels(0)
    var flipHorizontally = false
    var flipVertically = false
    var hasSize = false
    var halign: Substring?
    var valign: Substring?
    var smart = false
    /// The text of `filters:…` between `filters:` and the `)` that closes the last one, decoded.
    var filters: String?
    /// The image reference, raw.
    var image: Substring

    /// A signature segment as thumbor's base64 HMAC-SHA1 writes it: 27 URL-safe base64
    /// characters and `=` (or `%3D`, percent-encoded).
    static func isSignatureShaped(_ segment: Substring) -> Bool {
        let body: Substring
        if segment.utf8.count == 28, segment.hasSuffix("=") {
            body = segment.dropLast()
        } else if segment.utf8.count == 30, segment.hasSuffix("%3D") {
            body = segment.dropLast(3)
        } else {
            return false
        }
        return body.utf8.allSatisfy { isBase64URL($0) }
    }

    static func isBase64URL(_ c: UInt8) -> Bool {
        (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 45 || c == 95
    }

    /// Whether `segment` is one of thumbor's parts (after `unsafe`): what makes `/unsafe/…` a
    /// thumbor URL rather than a native one. Native options (`w:300`, `rs:…`) never are.
    static func isPart(_ segment: Substring) -> Bool {
        if ["debug", "meta", "smart", "left", "right", "center", "top", "middle", "bottom"].contains(segment) { return true }
        if Fit(rawValue: String(segment)) != nil { return true }
        if segment.hasPrefix("filters:") { return true }
        if isTrim(segment) { return true }
        if cropParts(segment) != nil { return true }
        return sizeParts(segment) != nil
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right`, each with an optional `:<digits>`.
    static func isTrim(_ s: Substring) -> Bool {
        guard s.hasPrefix("trim") else { return false }
        var rest = s.dropFirst(4)
        if rest.isEmpty { return true }
        for word in [":top-left", ":bottom-right"] where rest.hasPrefix(word) {
            rest = rest.dropFirst(word.count)
            break
        }
        if rest.isEmpty { return true }
        guard rest.first == ":" else { return false }
        let digits = rest.dropFirst()
        return !digits.isEmpty && digits.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// `AxB:CxD` as its four digit strings.
    static func cropParts(_ s: Substring) -> [Substring]? {
        let corners = s.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        var parts: [Substring] = []
        for corner in corners {
            let xy = corner.split(separator: "x", omittingEmptySubsequences: false)
            guard xy.count == 2, xy.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }) else { return nil }
            parts += xy
        }
        return parts
    }

    /// `[-][W|orig]x[-][H|orig]`: (flip, side text) for each axis.
    static func sizeParts(_ s: Substring) -> (Bool, Substring, Bool, Substring)? {
        let halves = s.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        func side(_ h: Substring) -> (Bool, Substring)? {
            let flip = h.hasPrefix("-")
            let value = flip ? h.dropFirst() : h
            guard value.isEmpty || value == "orig" || value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return (flip, value)
        }
        guard let w = side(halves[0]), let h = side(halves[1]) else { return nil }
        return (w.0, w.1, h.0, h.1)
    }

    /// The authority of `path` (raw, from the first `/`) and the rest, unread, or nil when it is
    /// not a thumbor URL: the first segment is neither signature-shaped nor `unsafe` followed by
    /// a thumbor part.
    static func parse(_ path: String) -> ThumborURL? {
        guard path.hasPrefix("/") else { return nil }
        let afterSlash = path.dropFirst()
        let first = afterSlash.prefix { $0 != "/" }
        guard first.endIndex < afterSlash.endIndex else { return nil }
        let rest = afterSlash[afterSlash.index(after: first.endIndex)...]
        let authority: Authority
        if first == "unsafe" {
            guard isPart(rest.prefix { $0 != "/" }) else { return nil }
            authority = .unsafe
        } else if isSignatureShaped(first) {
            authority = .signed(signature: String(first))
        } else {
            return nil
        }
        return ThumborURL(authority: authority, signed: rest, image: rest)
    }

    /// Reads the optional parts in thumbor's order; what is left is the image. Separate from
    /// `parse`, so that a signature is checked before anything else of the URL is judged.
    mutating func readParts(adapter: String) throws(AdapterError) {
        var rest = signed
        func next() -> Substring? {
            let segment = rest.prefix { $0 != "/" }
            return segment.endIndex < rest.endIndex ? segment : nil
        }
        func consume(_ segment: Substring) {
            rest = rest[rest.index(after: segment.endIndex)...]
        }
        if let s = next(), s == "debug" { debug = true; consume(s) }
        if let s = next(), s == "meta" { meta = true; consume(s) }
        if let s = next(), ThumborURL.isTrim(s) {
            // As thumbor's RequestParameters: the first word is the position, the second the
            // tolerance (so `trim:10` is the position "10", which thumbor's C reads as bottom-right).
            let words = Array(s.split(separator: ":").dropFirst())
            let tolerance = words.count > 1 ? try ThumborURL.number(words[1], "trim tolerance", adapter) : nil
            trim = (words.first, tolerance)
            consume(s)
        }
        if let s = next(), let parts = ThumborURL.cropParts(s) {
            var n: [Int] = []
            for p in parts { n.append(try ThumborURL.number(p, "crop", adapter)) }
            crop = (n[0], n[1], n[2], n[3])
            consume(s)
        }
        if let s = next(), let f = Fit(rawValue: String(s)) { fit = f; consume(s) }
        if let s = next(), let (fw, w, fh, h) = ThumborURL.sizeParts(s) {
            (flipHorizontally, flipVertically, hasSize) = (fw, fh, true)
            width = try ThumborURL.side(w, "width", adapter)
            height = try ThumborURL.side(h, "height", adapter)
            consume(s)
        }
        if let s = next(), ["left", "right", "center"].contains(s) { halign = s; consume(s) }
        if let s = next(), ["top", "bottom", "middle"].contains(s) { valign = s; consume(s) }
        if let s = next(), s == "smart" { smart = true; consume(s) }
        if rest.hasPrefix("filters:") {
            // thumbor's `filters:(?P<filters>.+?\))/`: up to the first `)` followed by `/`.
            guard let close = rest.firstRange(of: ")/") else {
                throw AdapterError(adapter, "filters: not closed by ')/' before the image")
            }
            let raw = rest[rest.index(rest.startIndex, offsetBy: 8)..<rest.index(after: close.lowerBound)]
            do throws(SpecError) {
                filters = try PathDecoding.decodeSegment(raw)
            } catch {
                throw AdapterError(adapter, "filters: bad percent-encoding, NUL or not UTF-8")
            }
            rest = rest[close.upperBound...]
        }
        image = rest
    }

    /// A whole number of at most 6 digits.
    static func number(_ s: Substring, _ what: String, _ adapter: String) throws(AdapterError) -> Int {
        guard (1...6).contains(s.utf8.count), let n = Int(s) else {
            throw AdapterError(adapter, "\(what) \(s.prefix(20)) must be a whole number below 1000000")
        }
        return n
    }

    static func side(_ s: Substring, _ what: String, _ adapter: String) throws(AdapterError) -> Side {
        if s == "orig" { return .orig }
        if s.isEmpty { return .pixels(0) }
        return .pixels(try number(s, what, adapter))
    }

    /// The names of the parts present (`AdapterParameter` names), for the declaration tests.
    var partNames: Set<String> {
        var names: Set<String> = []
        switch authority {
        case .unsafe: names.insert("unsafe")
        case .signed: names.insert("hmac")
        }
        if debug { names.insert("debug") }
        if meta { names.insert("meta") }
        if trim != nil { names.insert("trim") }
        if crop != nil { names.insert("AxB:CxD") }
        if let fit { names.insert(fit.rawValue) }
        if hasSize { names.insert("WxH") }
        if halign != nil { names.insert("halign") }
        if valign != nil { names.insert("valign") }
        if smart { names.insert("smart") }
        if filters != nil { names.insert("filters") }
        return names
    }
}
