/// Parses `/<option>/<option>/…/<source path>` into an `ImageRequest`, once.
///
/// An option is `name:arg[:arg…]` or a bare flag name (`circle`, `grayscale`, `sepia`). Options
/// end at the first segment that is not an option or at a literal `-`; the rest is the source
/// path. A segment that looks like an option (`word:…`) but names none is an error rather than a
/// path, so that typos do not silently become 404s; folders named like options go after `-`.
public struct SpecParser: Sendable {
    /// Resolves a name that is no built-in option to a custom operation (a processor registered
    /// in a custom build): nil when the name is unknown, throws for bad arguments.
    public typealias CustomResolver = @Sendable (_ name: String, _ arguments: [String]) throws(SpecError) -> CustomOperation?

    /// Largest width or height a resize, crop or pad may ask for (after `dpr`).
    public var maxDimension: Int
    /// Most operations one request may run, after presets are expanded.
    public var maxOperations: Int
    /// Largest `blur` / `sharpen` sigma.
    public var maxSigma: Double
    /// Longest request path in bytes, as received (query string included); checked first, so a
    /// 64 KB URL costs a length comparison.
    public var maxPathBytes: Int
    /// Most option segments in one URL, before presets are expanded; the parse stops at the first
    /// one over, so a URL of thousands of options costs no more than the limit.
    public var maxOptions: Int
    /// `preset:<name>` chains, e.g. `avatar` → `rs:96:96:fill/circle/f:webp`.
    public var presets: [String: String]
    /// The names of the configured watermarks (`[watermarks]`): `wm:<name>` must be one of them.
    public var watermarks: Set<String>
    public var customResolver: CustomResolver?

    public init(maxDimension: Int = 16_384, maxOperations: Int = 16, maxSigma: Double = 50,
                maxPathBytes: Int = 8_192, maxOptions: Int = 64,
                presets: [String: String] = [:], watermarks: Set<String> = [], customResolver: CustomResolver? = nil) {
        self.maxDimension = maxDimension
        self.maxOperations = maxOperations
        self.maxSigma = maxSigma
        self.maxPathBytes = maxPathBytes
        self.maxOptions = maxOptions
        self.presets = presets
        self.watermarks = watermarks
        self.customResolver = customResolver
    }

    /// Parses the path of a request; a query string is ignored. `isDecoded`: the path was already
    /// percent-decoded (nginx's `DOCUMENT_URI`), so `%` is taken literally. `hints`: the device's
    /// answers for `ch:1` / `w:auto` URLs (`DeviceHintUse`); without it `w:auto` is a 400.
    public func parse(_ rawPath: String, isDecoded: Bool = false,
                      hints: (any DeviceHintResolving)? = nil) throws(SpecError) -> ImageRequest {
        guard rawPath.utf8.count <= maxPathBytes else {
            throw .malformedPath(reason: "path too long: \(rawPath.utf8.count) bytes, at most \(maxPathBytes)")
        }
        if rawPath.utf8.contains(0) { throw .malformedPath(reason: "NUL byte (%00) in the path") }
        var path = Substring(rawPath)
        if !isDecoded, let q = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<q] }
        // Split on scalars, not Characters: a `/` followed by a combining mark is one Character.
        let segments = path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map { Substring($0) }
            .dropFirst(path.unicodeScalars.first == "/" ? 1 : 0)

        var builder = RequestBuilder()
        var index = segments.startIndex
        while index < segments.endIndex {
            let raw = segments[index]
            if raw == "-" { index += 1; break }
            let segment = isDecoded ? String(raw) : try PathDecoding.decodeSegment(raw)
            let steps = (builder.operations.count, builder.trim == nil)
            guard try parseOption(segment, into: &builder, presetDepth: 0) else { break }
            if builder.firstStepSegment == nil, steps != (builder.operations.count, builder.trim == nil) {
                builder.firstStepSegment = segment
            }
            index += 1
            guard index - segments.startIndex <= maxOptions else {
                throw .invalidOption(segment: "option \(maxOptions + 1)", reason: "at most \(maxOptions) options per URL")
            }
        }
        let sourcePath = try PathDecoding.sourcePath(from: segments[index...], isDecoded: isDecoded)
        return try builder.request(sourcePath: sourcePath, maxDimension: maxDimension, maxOperations: maxOperations, hints: hints)
    }

    /// Checks every preset: each must parse on its own and name no other preset.
    public func validatePresets() throws(SpecError) {
        for name in presets.keys.sorted() {
            var builder = RequestBuilder()
            _ = try parseOption("preset:\(name)", into: &builder, presetDepth: 0)
            _ = try builder.request(sourcePath: "x", maxDimension: maxDimension, maxOperations: maxOperations,
                                    hints: PresetCheckHints())
        }
    }

    /// Expands `preset:<name>[:<name>…]` in place.
    func expandPresets(_ names: [String], segment: String, into b: inout RequestBuilder, presetDepth: Int) throws(SpecError) {
        guard presetDepth == 0 else { throw .invalidOption(segment: segment, reason: "a preset cannot use another preset") }
        guard !names.isEmpty else { throw .invalidOption(segment: segment, reason: "missing preset name") }
        for name in names {
            guard let chain = presets[name] else {
                throw .invalidOption(segment: segment, reason: "no preset named \"\(name)\"")
            }
            if !b.presets.contains(name) { b.presets.append(name) }
            for part in chain.split(separator: "/") where !part.isEmpty {
                let option = String(part)
                guard try parseOption(option, into: &b, presetDepth: presetDepth + 1) else {
                    throw .invalidOption(segment: segment, reason: "preset \"\(name)\" contains \"\(option)\", which is no option")
                }
            }
        }
    }
}

/// Any width for `w:auto` in a preset, so `validatePresets` checks the rest of the chain.
struct PresetCheckHints: DeviceHintResolving {
    func resolve(_ use: DeviceHintUse) -> DeviceAnswer { DeviceAnswer(width: 1) }
}
