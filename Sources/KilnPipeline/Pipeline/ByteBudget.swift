import Glibc
import KilnModel

/// `max_bytes:<n>` (`mb`): the quality search that fits a lossy result under a byte budget
/// (imgproxy's `max_bytes`, thumbor's `max_bytes()`).
///
/// JPEG, lossy WebP and AVIF: the first encode is at the request's quality (`q:` or the format's
/// configured default). When it is over the budget, one encode at `minimumQuality` brackets the
/// answer (over budget there too: the smaller of the two is answered, marked exceeded), then the
/// bracket narrows by interpolation on the logarithm of the size (leaning towards the end that
/// has not moved when the other keeps moving, `lean`), at most `maximumEncodes` encodes in all.
/// The answer is the highest quality found that fits; when the encodes run out first, the lowest
/// quality found too large is `ByteBudgetResult.over`. Every encode is planned in the request's
/// work budget (`RequestCost`: the encode step counts `maximumEncodes` times). Under a render
/// deadline (`limits.render_timeout`) the search starts no encode that would not end before it
/// (`RenderCoordinator.fitsBeforeDeadline`, expecting the longest encode so far): it answers the
/// best result found so far, marked `deadline` (`ByteBudgetResult.cutShort`).
///
/// Other outputs (PNG, lossless, what `f:auto` or the source's format resolves to at render time)
/// are encoded once and marked by whether they fit; an explicit `f:png` or `lossless:1` with
/// `max_bytes` is a 400 (`RequestBuilder`), and so is an animated output
/// (`PipelineError.byteBudgetAnimation`).
public enum ByteBudget {
    /// The lowest quality the search tries.
    public static let minimumQuality = 10
    /// Most encodes of one result.
    public static let maximumEncodes = 6
    /// How far the estimate leans towards the end that has not moved, per move of the other end
    /// in a row (0.1: on the size curves of JPEG, WebP and AVIF of the bench photos, 1200
    /// simulated searches closed the bracket to one quality step in 93 % of cases, never more
    /// than 2 steps off the best quality, 4.7 encodes on average; plain interpolation on the size
    /// closed 40 %, bisection after two moves of one end 72 % and up to 28 steps off).
    static let lean = 0.1

    /// Whether `format` (with `lossless`) has a quality the search can lower.
    public static func searches(_ format: ImageFormat, lossless: Bool) -> Bool {
        format.hasQuality(lossless: lossless)
    }
}

/// What a `max_bytes` request's encode found.
public struct ByteBudgetResult: Sendable, Equatable {
    /// The encoded result answered.
    public var data: [UInt8]
    /// The quality of `data`; nil when the format has none that was searched (PNG, lossless).
    public var quality: Int?
    /// How many encodes ran.
    public var encodes: Int
    /// The lowest quality tried that was over the budget, nil when none was.
    public var over: Int?
    /// The budget, nil when the request has none.
    public var budget: Int?
    /// True when the render deadline stopped the search before it ended.
    public var cutShort = false

    /// True when the answer is over the budget (even the lowest quality did not fit).
    public var exceeded: Bool { budget.map { data.count > $0 } ?? false }

    /// The `Server-Timing` description of the `encode` phase: `encodes=3 q=62 over=63`, and
    /// `exceeded` when nothing fitted.
    public var timingDescription: String {
        var parts = ["encodes=\(encodes)"]
        if let quality { parts.append("q=\(quality)") }
        if let over { parts.append("over=\(over)") }
        if exceeded { parts.append("exceeded") }
        if cutShort { parts.append("deadline") }
        return parts.joined(separator: " ")
    }
}

extension ImagePipeline {
    /// Encodes `image` with `options`, under `budget` bytes when given (`ByteBudget`).
    func encode(_ image: PixelBuffer, options: EncodeOptions, budget: Int?) throws -> ByteBudgetResult {
        let encoder = stages.encoders.encoder(for: options.format)
        var encodes = 0
        var longest = 0.0   // ms, the longest encode so far
        func encode(quality: Int) throws -> [UInt8] {
            encodes += 1
            var o = options
            o.quality = quality
            if encodes > 1 { try observer?.enter(.encode, detail: "q \(quality)") }
            let started = Timeline.now()
            defer { longest = max(longest, Double(Timeline.now() - started) / 1_000_000) }
            return try encoder.encode(image, options: o)
        }
        /// Whether one more encode ends before the render deadline.
        func anotherFits() -> Bool { cache?.fitsBeforeDeadline(milliseconds: longest) ?? true }
        guard let budget, ByteBudget.searches(options.format, lossless: options.lossless) else {
            let data = try encoder.encode(image, options: options)
            return ByteBudgetResult(data: data, quality: nil, encodes: 1, over: nil, budget: budget)
        }
        let start = options.quality
        let first = try encode(quality: start)
        if first.count <= budget || start <= ByteBudget.minimumQuality {
            return ByteBudgetResult(data: first, quality: start, encodes: encodes,
                                    over: first.count > budget ? start : nil, budget: budget)
        }
        guard anotherFits() else {
            var result = ByteBudgetResult(data: first, quality: start, encodes: encodes, over: start, budget: budget)
            result.cutShort = true
            return result
        }
        let floor = try encode(quality: ByteBudget.minimumQuality)
        if floor.count > budget {
            let smaller = floor.count <= first.count
            return ByteBudgetResult(data: smaller ? floor : first, quality: smaller ? ByteBudget.minimumQuality : start,
                                    encodes: encodes, over: ByteBudget.minimumQuality, budget: budget)
        }
        // lo fits, hi does not.
        var lo = ByteBudget.minimumQuality, loData = floor
        var hi = start, hiSize = first.count
        // The end that moved last (+1 lo, -1 hi) and how many times in a row.
        var side = 0, streak = 0
        var cutShort = false
        while hi - lo > 1 && encodes < ByteBudget.maximumEncodes {
            guard anotherFits() else {
                cutShort = true
                break
            }
            let a = log(Double(max(1, loData.count))), b = log(Double(hiSize)), target = log(Double(budget))
            var estimate = Double(lo) + Double(hi - lo) * (b > a ? (target - a) / (b - a) : 0.5)
            // Illinois-style: when one end keeps moving, lean towards the other.
            if side > 0 { estimate += (Double(hi) - estimate) * ByteBudget.lean * Double(streak) }
            if side < 0 { estimate -= (estimate - Double(lo)) * ByteBudget.lean * Double(streak) }
            let q = min(max(Int(estimate.rounded(.down)), lo + 1), hi - 1)
            let data = try encode(quality: q)
            if data.count <= budget {
                (lo, loData) = (q, data)
                streak = side > 0 ? streak + 1 : 1
                side = 1
            } else {
                (hi, hiSize) = (q, data.count)
                streak = side < 0 ? streak + 1 : 1
                side = -1
            }
        }
        var result = ByteBudgetResult(data: loData, quality: lo, encodes: encodes, over: hi, budget: budget)
        result.cutShort = cutShort
        return result
    }
}
