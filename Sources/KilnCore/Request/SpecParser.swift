/// Parses `/<option>/<option>/…/<source path>` into an `ImageRequest`, once.
///
/// An option is `name:arg[:arg…]` (or a bare name for flag options). Options end at the first
/// segment that is not an option or at a literal `-`; the rest is the source path. A segment that
/// looks like an option (`word:…`) but names none is an error rather than a path, so that typos
/// do not silently become 404s; folders named like options go after `-`.
public struct SpecParser: Sendable {
    /// Largest width or height a resize may ask for.
    public var maxDimension: Int

    public init(maxDimension: Int = 16_384) {
        self.maxDimension = maxDimension
    }

    /// Parses the path of a request; a query string is ignored. `isDecoded`: the path was already
    /// percent-decoded (nginx's `DOCUMENT_URI`), so `%` is taken literally.
    public func parse(_ rawPath: String, isDecoded: Bool = false) throws(SpecError) -> ImageRequest {
        var path = Substring(rawPath)
        if !isDecoded, let q = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<q] }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(path.hasPrefix("/") ? 1 : 0)

        var builder = Builder()
        var index = segments.startIndex
        while index < segments.endIndex {
            let raw = segments[index]
            if raw == "-" { index += 1; break }
            let segment = isDecoded ? String(raw) : try PathDecoding.decodeSegment(raw)
            guard try parseOption(segment, into: &builder) else { break }
            index += 1
        }
        let sourcePath = try PathDecoding.sourcePath(from: segments[index...], isDecoded: isDecoded)
        return builder.request(sourcePath: sourcePath)
    }

    /// Applies one segment; false when the segment is not an option (the path starts here).
    private func parseOption(_ segment: String, into b: inout Builder) throws(SpecError) -> Bool {
        let fields = segment.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = fields[0]
        let args = Array(fields.dropFirst())
        func int(_ i: Int, _ what: String, _ range: ClosedRange<Int>) throws(SpecError) -> Int {
            guard i < args.count else { throw .invalidOption(segment: segment, reason: "missing \(what)") }
            guard let v = Int(args[i]), range.contains(v) else {
                throw .invalidOption(segment: segment, reason: "\(what) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return v
        }
        func arity(_ allowed: ClosedRange<Int>) throws(SpecError) {
            guard allowed.contains(args.count) else {
                throw .invalidOption(segment: segment, reason: "takes \(allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed.lowerBound) to \(allowed.upperBound)") argument(s)")
            }
        }
        let dims = 0...maxDimension
        switch name {
        case "resize", "rs":
            try arity(2...3)
            let w = try int(0, "width", dims), h = try int(1, "height", dims)
            var mode = ResizeMode.fit
            if args.count == 3 {
                guard let m = ResizeMode(rawValue: args[2]) else {
                    throw .invalidOption(segment: segment, reason: "mode must be fit, fill or force")
                }
                mode = m
            }
            b.setResize(width: w, height: h, mode: mode)
        case "width", "w":
            try arity(1...1)
            b.setResize(width: try int(0, "width", dims), height: nil, mode: nil)
        case "height", "h":
            try arity(1...1)
            b.setResize(width: nil, height: try int(0, "height", dims), mode: nil)
        case "enlarge", "el":
            try arity(1...1)
            b.enlarge = try int(0, "enlarge", 0...1) == 1
        case "quality", "q":
            try arity(1...1)
            b.output.quality = try int(0, "quality", 1...100)
        case "format", "f":
            try arity(1...1)
            switch args[0] {
            case "auto": b.output.format = .auto
            case "jpg": b.output.format = .format(.jpeg)
            default:
                guard let f = ImageFormat(rawValue: args[0]) else {
                    throw .invalidOption(segment: segment, reason: "format must be jpeg, png, webp or auto")
                }
                b.output.format = .format(f)
            }
        default:
            if fields.count > 1, !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "_" }) {
                throw .unknownOption(segment: segment)
            }
            return false
        }
        return true
    }

    /// Collects options; consecutive size options (`w:300/h:200`) make one resize at the place of the first.
    struct Builder {
        var operations: [Operation] = []
        var output = OutputOptions()
        var enlarge = false
        var resizeIndex: Int?

        mutating func setResize(width: Int?, height: Int?, mode: ResizeMode?) {
            if let i = resizeIndex, case .resize(var r) = operations[i] {
                if let width { r.width = width }
                if let height { r.height = height }
                if let mode { r.mode = mode }
                operations[i] = .resize(r)
            } else {
                operations.append(.resize(ResizeOptions(width: width ?? 0, height: height ?? 0, mode: mode ?? .fit)))
                resizeIndex = operations.count - 1
            }
        }

        func request(sourcePath: String) -> ImageRequest {
            let ops = operations.map { op -> Operation in
                guard case .resize(var r) = op else { return op }
                r.enlarge = enlarge
                return .resize(r)
            }
            return ImageRequest(sourcePath: sourcePath, operations: ops, output: output)
        }
    }
}
