/// Collects parsed options, then resolves the request-wide ones into the operations:
/// `w:`/`h:` merge into one resize at the place of the first, `el:` and `g:` apply to every
/// resize (and to crops without their own gravity), `dpr:` multiplies resize and pad sizes, and
/// `bg:` becomes the fill of `pad`, and watermarks (`wm:`) move after every other operation.
struct RequestBuilder {
    var operations: [Operation] = []
    /// `wm:` steps in URL order: they run last, on the finished image.
    var watermarks: [WatermarkOptions] = []
    var output = OutputOptions()
    var enlarge = false
    var gravity = Gravity.center
    var dpr = 1.0
    /// The URL (or a preset) wrote `dpr:`: the device's pixel ratio does not replace it.
    var dprGiven = false
    /// `ch:1`: the device's hints apply (`DeviceHintUse`).
    var clientHints = false
    /// `w:auto`: the resize at `resizeIndex` takes the device's width.
    var autoWidth = false
    var autorotate = true
    /// `exp:` (unix seconds), kept out of the canonical form.
    var expires: Int64?
    /// `cb:` (part of the canonical form).
    var version: String?
    /// `trim:`, which runs before every other operation wherever the URL writes it.
    var trim: TrimOptions?
    /// `filename:` and `attachment:` (kept out of the canonical form).
    var download = DownloadOptions()
    /// The presets the URL named (`pr:`), in order, each once (`ImageRequest.presets`).
    var presets: [String] = []
    /// The resize that `w:` and `h:` write into.
    var resizeIndex: Int?
    /// Crops written without a gravity: they take the request's `g:`.
    var cropsWithoutGravity: Set<Int> = []
    /// The first segment, as the client wrote it (`w:300`, `pr:card`), that added a processing
    /// step: what a refusal of processing quotes, rather than the step's canonical form.
    var firstStepSegment: String?

    mutating func append(_ operation: Operation) {
        operations.append(operation)
    }

    mutating func appendWatermark(_ watermark: WatermarkOptions) {
        watermarks.append(watermark)
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

    func request(sourcePath: String, maxDimension: Int, maxOperations: Int,
                 hints: (any DeviceHintResolving)? = nil) throws(SpecError) -> ImageRequest {
        var output = try documentOutput()
        let use = hintUse(output)
        var dpr = self.dpr
        var autoWidth: Int?
        if let hints {
            let answer = hints.resolve(use)
            if use.dpr, let d = answer.dpr, (1...4).contains(d) { dpr = d }
            if use.width { autoWidth = answer.width }
            if use.quality, let q = answer.quality, (1...100).contains(q) { output.quality = q }
        }
        if use.width, autoWidth == nil {
            throw .invalidOption(segment: "w:auto", reason: "takes its width from Client Hints, which only an HTTP request has")
        }
        let count = operations.count + watermarks.count + (trim == nil ? 0 : 1)
        guard count <= maxOperations else {
            throw .invalidOption(segment: "\(count) operations", reason: "at most \(maxOperations) operations per request")
        }
        if let maxBytes = output.maxBytes {
            // PNG and lossless WebP have no quality to lower (`docs/url-api.md`, Byte budget).
            if output.lossless || output.format == .format(.png) {
                throw .invalidOption(segment: "max_bytes:\(maxBytes)",
                                     reason: "max_bytes needs a lossy output format (jpeg, webp or avif), not "
                                        + (output.lossless ? "lossless:1" : "png"))
            }
        }
        func scale(_ v: Int) throws(SpecError) -> Int {
            let scaled = Int((Double(v) * dpr).rounded())
            guard scaled <= maxDimension else {
                throw .invalidOption(segment: "dpr:\(Gravity.format(dpr))", reason: "makes a size of \(scaled), over the limit of \(maxDimension)")
            }
            return scaled
        }
        var ops: [Operation] = trim.map { [.trim($0)] } ?? []
        for (i, op) in operations.enumerated() {
            switch op {
            case .resize(var r):
                r.enlarge = enlarge
                if r.mode == .fill || r.mode == .auto { r.gravity = gravity }
                if i == resizeIndex, let autoWidth {
                    // Already in device pixels: not multiplied by the ratio again.
                    guard (1...maxDimension).contains(autoWidth) else {
                        throw .invalidOption(segment: "w:auto", reason: "a width of \(autoWidth) is over the limit of \(maxDimension)")
                    }
                    r.width = autoWidth
                } else {
                    r.width = try scale(r.width)
                }
                r.height = try scale(r.height)
                ops.append(.resize(r))
            case .crop(var c) where cropsWithoutGravity.contains(i):
                c.gravity = gravity
                ops.append(.crop(c))
            case .pad(var p):
                p = Padding(top: try scale(p.top), right: try scale(p.right), bottom: try scale(p.bottom),
                            left: try scale(p.left), background: output.background)
                ops.append(.pad(p))
            case .extend(var e):
                e.width = try scale(e.width)
                e.height = try scale(e.height)
                e.background = output.background
                ops.append(.extend(e))
            case .rounded(let radius):
                ops.append(.rounded(radius: max(1, try scale(radius))))
            default:
                ops.append(op)
            }
        }
        for var w in watermarks {
            w.x = try scale(w.x)
            w.y = try scale(w.y)
            ops.append(.watermark(w))
        }
        var request = ImageRequest(sourcePath: sourcePath, operations: ops, output: output, autorotate: autorotate, expires: expires, version: version,
                                   download: download)
        request.hintUse = use
        request.presets = presets
        return request
    }

    /// What this URL leaves to the device (before any answer).
    /// What the device may decide for this URL. Save-Data lowers a quality: not for a document, a
    /// URL with its own `q:`, a lossless one or one whose fixed format has no quality (`f:png`).
    func hintUse(_ output: OutputOptions) -> DeviceHintUse {
        let enabled = clientHints || autoWidth
        let fixed: ImageFormat? = if case .format(let format) = output.format { format } else { nil }
        let qualityMatters = fixed?.hasQuality(lossless: output.lossless) ?? !output.lossless
        var use = DeviceHintUse(enabled: enabled, width: autoWidth, dpr: enabled && !dprGiven,
                                quality: output.quality == nil && output.document == nil && qualityMatters,
                                autoFormat: output.format == .auto)
        use.urlDPR = dpr
        return use
    }

    /// The output options, checked for the document kinds: `placeholders:1` belongs to `f:json`,
    /// `blurhash:` to `f:blurhash` or `f:json/placeholders:1`, and `f:blurhash` / `f:thumbhash`
    /// describe the source, so they take no processing step. Encoder options (`q:`, `pg:`, `ll:`,
    /// `strip:`, `bg:`, `frame:`) change no document: they are dropped, so such URLs share one entry.
    func documentOutput() throws(SpecError) -> OutputOptions {
        guard let document = output.document else {
            if output.placeholders { throw .invalidOption(segment: "placeholders:1", reason: "applies to f:json only") }
            if let c = output.blurhash { throw .invalidOption(segment: "blurhash:\(c.x):\(c.y)", reason: "applies to f:blurhash and f:json/placeholders:1 only") }
            return output
        }
        if output.placeholders && document != .json {
            throw .invalidOption(segment: "placeholders:1", reason: "applies to f:json only (f:\(document.rawValue) is a placeholder itself)")
        }
        if let c = output.blurhash, document == .thumbhash || (document == .json && !output.placeholders) {
            throw .invalidOption(segment: "blurhash:\(c.x):\(c.y)", reason: "applies to f:blurhash and f:json/placeholders:1 only")
        }
        if document != .json, let first = trim.map({ Operation.trim($0) }) ?? operations.first {
            throw .invalidOption(segment: firstStepSegment ?? first.canonical, reason: "f:\(document.rawValue) describes the source image and takes no processing step")
        }
        var kept = OutputOptions()
        kept.document = document
        kept.placeholders = output.placeholders
        kept.blurhash = output.blurhash
        return kept
    }
}
