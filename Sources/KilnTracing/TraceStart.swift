import KilnModel
import W3CTraceContext

/// The trace a request belongs to, decided when it arrives: the W3C `traceparent` it carries
/// (parsed by swift-w3c-trace-context; a malformed one is ignored, as the spec asks) or a new
/// trace id, the sampler's choice, and the id of the request's own span.
public struct TraceStart: Sendable, Equatable {
    /// 16 bytes.
    public var traceID: [UInt8]
    /// The caller's span (8 bytes), empty without a valid `traceparent`.
    public var parentSpanID: [UInt8]
    /// The `tracestate` that came with the parent, carried on unchanged.
    public var traceState: String
    /// The request's own span id (8 bytes).
    public var spanID: [UInt8]
    public var sampled: Bool

    public var hasRemoteParent: Bool { !parentSpanID.isEmpty }

    /// The trace of a request with these headers (nil: absent). Without a valid `traceparent`,
    /// `requestID` (nginx's `$request_id`: 32 random hex digits) becomes the trace id when it is
    /// one, so logs and traces share it; otherwise the id is new.
    public static func begin(traceparent: String?, tracestate: String?, requestID: String? = nil,
                             sampler: TraceSampler) -> TraceStart {
        var system = SystemRandomNumberGenerator()
        return begin(traceparent: traceparent, tracestate: tracestate, requestID: requestID, sampler: sampler, using: &system)
    }

    /// `begin`, with ids from `generator`.
    public static func begin(traceparent: String?, tracestate: String?, requestID: String? = nil, sampler: TraceSampler,
                             using generator: inout some RandomNumberGenerator) -> TraceStart {
        let spanID = TraceStart.bytes(SpanID.random(using: &generator))
        if let traceparent, let parent = try? TraceContext(traceParentHeaderValue: traceparent, traceStateHeaderValue: tracestate) {
            let traceID = TraceStart.bytes(parent.traceID)
            return TraceStart(traceID: traceID, parentSpanID: TraceStart.bytes(parent.spanID),
                              traceState: parent.traceStateHeaderValue ?? "", spanID: spanID,
                              sampled: sampler.samples(traceID: traceID, parentSampled: parent.flags.contains(.sampled)))
        }
        let traceID = requestID.flatMap(TraceStart.traceID(hex:)) ?? TraceStart.bytes(TraceID.random(using: &generator))
        return TraceStart(traceID: traceID, parentSpanID: [], traceState: "", spanID: spanID,
                          sampled: sampler.samples(traceID: traceID, parentSampled: nil))
    }

    /// A new span id for a child of this trace.
    public static func newSpanID(using generator: inout some RandomNumberGenerator) -> [UInt8] {
        bytes(SpanID.random(using: &generator))
    }

    /// `traceparent` for this request's span (`00-<trace>-<span>-<flags>`), e.g. for an answer's log.
    public var traceparent: String {
        "00-\(Hex.lowercase(traceID))-\(Hex.lowercase(spanID))-\(sampled ? "01" : "00")"
    }

    /// 32 lower-case hex digits, not all zero, as 16 bytes (W3C's trace-id); nil otherwise.
    static func traceID(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        for i in stride(from: 0, to: 32, by: 2) {
            guard let hi = nibble(digits[i]), let lo = nibble(digits[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out.contains { $0 != 0 } ? out : nil
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    static func bytes(_ id: TraceID) -> [UInt8] { withUnsafeBytes(of: id.bytes) { Array($0) } }
    static func bytes(_ id: SpanID) -> [UInt8] { withUnsafeBytes(of: id.bytes) { Array($0) } }
}
