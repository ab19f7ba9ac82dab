import KilnModel

/// A request over one of the per-request budgets of `[limits]` (issue 14): refused with a 413
/// (`PipelineFailure.Kind.tooLarge`) whose one-line reason names the limit's key and the amount,
/// and remembered like other failures.
public enum BudgetExcess: Error, Equatable, Sendable {
    /// The plan's largest live set (`RequestCost.peakBytes`) is over `limits.max_request_memory`;
    /// `step` names the step where it peaks.
    case memory(needed: Int, limit: Int, step: String)
    /// The plan's work is over `limits.max_request_work` (megapixel-passes).
    case work(needed: Double, limit: Int)
    /// The encoded result (`planned`: a lower bound known before decoding) is over
    /// `limits.max_output_bytes`.
    case outputBytes(bytes: Int, limit: Int, planned: Bool)

    /// The public one-line reason.
    public var message: String {
        switch self {
        case let .memory(needed, limit, step):
            "needs about \(Self.bytes(needed)) of memory (at \(step)), more than "
                + "\(LimitsConfiguration.Key.maxRequestMemory.key) (\(Self.bytes(limit)))"
        case let .work(needed, limit):
            "needs about \(Int(needed.rounded(.up))) megapixel-passes of work, more than "
                + "\(LimitsConfiguration.Key.maxRequestWork.key) (\(limit))"
        case let .outputBytes(bytes, limit, planned):
            (planned ? "the result would be at least \(Self.bytes(bytes))" : "the result is \(Self.bytes(bytes))")
                + ", more than \(LimitsConfiguration.Key.maxOutputBytes.key) (\(Self.bytes(limit)))"
        }
    }

    /// `1.4 GiB`, `312 MiB`, `96 KiB`: binary units, as the configuration writes sizes.
    static func bytes(_ n: Int) -> String {
        let v = Double(n)
        if v >= Double(1 << 30) { return String(format1: v / Double(1 << 30)) + " GiB" }
        if v >= Double(1 << 20) {
            let m = v / Double(1 << 20)
            return (m >= 10 || m == m.rounded() ? "\(Int(m.rounded()))" : String(format1: m)) + " MiB"
        }
        if v >= 1024 { return "\(Int((v / 1024).rounded())) KiB" }
        return "\(n) bytes"
    }
}

private extension String {
    /// One decimal, without Foundation.
    init(format1 v: Double) {
        let tenths = Int((v * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}

extension ImagePipeline {
    /// Plans the cost of `request` before decoding and throws `BudgetExcess` when it is over
    /// `limits.max_request_memory` or `limits.max_request_work`, or when the result would be
    /// larger than `limits.max_output_bytes` for sure (PNG at compression level 0 stores every
    /// row: at least height × (1 + width × 3) bytes; other formats have no sound lower bound, the
    /// size is checked after encoding).
    func checkBudget(_ request: ImageRequest, format: ImageFormat, data: [UInt8], header: ImageHeader,
                     accepted: FormatNegotiation) throws(BudgetExcess) {
        let cost = RequestCost.plan(request, format: format, data: data, header: header, accepted: accepted, output: output,
                                    marks: stages.watermarks)
        if cost.peakBytes > limits.maxRequestMemory {
            throw .memory(needed: cost.peakBytes, limit: limits.maxRequestMemory, step: cost.peakStep?.name ?? "decode")
        }
        if cost.work > Double(limits.maxRequestWork) {
            throw .work(needed: cost.work, limit: limits.maxRequestWork)
        }
        if output.pngCompressionLevel == 0,
           let size = request.plannedOutputSize(source: header.displayedSize),
           request.output.resolvedFormat(source: format, accepted: accepted, size: size, hasAlpha: header.hasAlpha) == .png {
            let lower = size.height * (1 + size.width * 3)
            if lower > limits.maxOutputBytes { throw .outputBytes(bytes: lower, limit: limits.maxOutputBytes, planned: true) }
        }
    }

    /// Throws `BudgetExcess.outputBytes` when the encoded result is over `limits.max_output_bytes`.
    func checkOutputBytes(_ encoded: [UInt8]) throws(BudgetExcess) {
        guard encoded.count <= limits.maxOutputBytes else {
            throw .outputBytes(bytes: encoded.count, limit: limits.maxOutputBytes, planned: false)
        }
    }
}

extension ImagePipeline {
    /// Whether `error`, a budget refusal of some variant, refuses every variant of the source:
    /// its decode alone, at the smallest size any request could decode it at, is over the same
    /// budget. Such a refusal is remembered per source (`SourceFault`); one the variant's own
    /// steps cause (a large output, a blur) stays per variant.
    func overBudgetForEveryVariant(_ error: any Error, format: ImageFormat, data: [UInt8], header: ImageHeader) -> Bool {
        guard let excess = error as? BudgetExcess else { return false }
        let (smallest, _) = RequestCost.decodeStep(format: format, data: data, header: header,
                                                   minimum: PixelSize(width: 1, height: 1))
        switch excess {
        case .memory: return smallest.bytes > limits.maxRequestMemory
        case .work: return smallest.work > Double(limits.maxRequestWork)
        case .outputBytes: return false
        }
    }
}
