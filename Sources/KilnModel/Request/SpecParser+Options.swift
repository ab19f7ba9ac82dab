/// The options of the URL grammar, dispatched to their declarations (`OptionCatalog`).
extension SpecParser {
    /// Sigmas below this (`bl:`, `sh:`) change no pixel: the Gaussian's weight one pixel away is
    /// below 2e-22, so the step is dropped from the request (it shares the cache key of the URL
    /// without it). Tiny sigmas then never reach the kernel, where a sigma whose square
    /// underflows would divide 0 by 0 and paint the image black.
    public static let minimumSigma = 0.1

    /// The largest `max_bytes:` (100 MB; `limits.max_output_bytes` caps every result anyway).
    public static let maxBytesLimit = 100_000_000

    /// Applies one segment; false when the segment is not an option (the path starts here).
    /// The option's declaration (`OptionCatalog`) parses its arguments.
    func parseOption(_ segment: String, into b: inout RequestBuilder, presetDepth: Int) throws(SpecError) -> Bool {
        let fields = segment.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let a = OptionArguments(segment: segment, args: Array(fields.dropFirst()))
        let name = fields[0]
        if let option = OptionCatalog.declaration(named: name) {
            try option.apply(a, &b, OptionContext(parser: self, presetDepth: presetDepth, segment: segment, name: name))
            return true
        }
        if let resolver = customResolver, let custom = try resolver(name, a.args) {
            b.append(.custom(custom))
            return true
        }
        if fields.count > 1, !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "_" }) {
            throw .unknownOption(segment: segment)
        }
        return false
    }

    /// The canonical option name of `name` (an alias or long name); unknown names stay as they are.
    public static func canonicalOptionName(_ name: String) -> String {
        OptionCatalog.declaration(named: name)?.name ?? name
    }

    /// The operation `name` runs: `resize` for `w`, nil for request-wide options such as `q`;
    /// an unknown name (a custom processor) is its own operation.
    public static func operationName(_ name: String) -> String? {
        guard let known = OptionCatalog.declaration(named: name) else { return name }
        return known.operation
    }

    /// A fraction rounded to the four decimals `canonical` spells, so that the key's text and
    /// the pixels agree (`wm:` opacity and scale).
    static func quantized(_ v: Double) -> Double {
        (v * 10_000).rounded() / 10_000
    }

    static let gravityHelp = "gravity must be center, north, south, east, west, ne, nw, se, sw, smart or fp:<x>:<y> with x and y in 0...1"
}
