/// Which requests are traced: OpenTelemetry's `ParentBased(TraceIdRatioBased(ratio))`. With a
/// `traceparent` (and `followParent`), its sampled flag decides, so a trace is whole across the
/// tiers; otherwise the trace id does: its last 8 bytes, read big-endian with the top bit
/// dropped, below `ratio` × 2⁶³ (as OpenTelemetry's Java and Go samplers do), so every tier that
/// samples a trace id by the same ratio makes the same choice.
public struct TraceSampler: Sendable, Equatable {
    public var ratio: Double
    public var followParent: Bool

    public init(ratio: Double, followParent: Bool = true) {
        self.ratio = min(1, max(0, ratio))
        self.followParent = followParent
    }

    /// Whether the trace `traceID` (16 bytes) is recorded; `parentSampled` is the parent's flag
    /// (nil: no parent).
    public func samples(traceID: [UInt8], parentSampled: Bool?) -> Bool {
        if followParent, let parentSampled { return parentSampled }
        return TraceSampler.below(ratio: ratio, traceID: traceID)
    }

    static func below(ratio: Double, traceID: [UInt8]) -> Bool {
        if ratio >= 1 { return true }
        if ratio <= 0 || traceID.count < 8 { return false }
        let low = traceID.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & 0x7FFF_FFFF_FFFF_FFFF
        // In whole numbers: a Double holds 53 bits, not the 63 compared.
        return low < UInt64(ratio * 9_223_372_036_854_775_808.0)
    }
}
