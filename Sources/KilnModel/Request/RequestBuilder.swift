/// Collects parsed options, then resolves the request-wide ones into the operations:
/// `w:`/`h:` merge into one resize at the place of the first, `el:` and `g:` apply to every
/// resize (and to crops without their own gravity), `dpr:` multiplies resize and pad sizes, and
/// `bg:` becomes the fill of `pad`.
struct RequestBuilder {
    var operations: [Operation] = []
    var output = OutputOptions()
    var enlarge = false
    var gravity = Gravity.center
    var dpr = 1.0
    var autorotate = true
    /// `exp:` (unix seconds), kept out of the canonical form.
    var expires: Int64?
    /// `cb:` (part of the canonical form).
    var version: String?
    /// `filename:` and `attachment:` (kept out of the canonical form).
    var download = DownloadOptions()
    /// The resize that `w:` and `h:` write into.
    var resizeIndex: Int?
    /// Crops written without a gravity: they take the request's `g:`.
    var cropsWithoutGravity: Set<Int> = []

    mutating func append(_ operation: Operation) {
        operations.append(operation)
    }

    mutating func appendCropWithRequestGravity(_ crop: CropOptions) {
        cropsWithoutGravity.insert(operations.count)
        operations.append(.crop(crop))
    }

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

    func request(sourcePath: String, maxDimension: Int, maxOperations: Int) throws(SpecError) -> ImageRequest {
        guard operations.count <= maxOperations else {
            throw .invalidOption(segment: "\(operations.count) operations", reason: "at most \(maxOperations) operations per request")
        }
        func scale(_ v: Int) throws(SpecError) -> Int {
            let scaled = Int((Double(v) * dpr).rounded())
            guard scaled <= maxDimension else {
                throw .invalidOption(segment: "dpr:\(Gravity.format(dpr))", reason: "makes a size of \(scaled), over the limit of \(maxDimension)")
            }
            return scaled
        }
        var ops: [Operation] = []
        for (i, op) in operations.enumerated() {
            switch op {
            case .resize(var r):
                r.enlarge = enlarge
                if r.mode == .fill { r.gravity = gravity }
                r.width = try scale(r.width)
                r.height = try scale(r.height)
                ops.append(.resize(r))
            case .crop(var c) where cropsWithoutGravity.contains(i):
                c.gravity = gravity
                ops.append(.crop(c))
            case .pad(var p):
                p = Padding(top: try scale(p.top), right: try scale(p.right), bottom: try scale(p.bottom),
                            left: try scale(p.left), background: output.background)
                ops.append(.pad(p))
            case .rounded(let radius):
                ops.append(.rounded(radius: max(1, try scale(radius))))
            default:
                ops.append(op)
            }
        }
        return ImageRequest(sourcePath: sourcePath, operations: ops, output: output, autorotate: autorotate, expires: expires, version: version,
                            download: download)
    }
}
