import Testing

@testable import KilnTracing

@Suite struct TraceSamplerTests {
    static func traceID(low: UInt64) -> [UInt8] {
        [UInt8](repeating: 0xAB, count: 8) + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64($0))) }
    }

    @Test func ratioComparesTheLowEightBytesOfTheTraceID() {
        let half = TraceSampler(ratio: 0.5)
        #expect(half.samples(traceID: Self.traceID(low: 0), parentSampled: nil))
        #expect(half.samples(traceID: Self.traceID(low: (1 << 62) - 1), parentSampled: nil))
        #expect(!half.samples(traceID: Self.traceID(low: 1 << 62), parentSampled: nil))
        // The top bit is not part of the comparison (OpenTelemetry's 63 random bits).
        #expect(half.samples(traceID: Self.traceID(low: 1 << 63), parentSampled: nil))
    }

    @Test func zeroAndOneAreNeverAndAlways() {
        for low: UInt64 in [0, 1, 1 << 40, .max] {
            #expect(TraceSampler(ratio: 1).samples(traceID: Self.traceID(low: low), parentSampled: nil))
            #expect(!TraceSampler(ratio: 0).samples(traceID: Self.traceID(low: low), parentSampled: nil))
        }
    }

    @Test func aParentDecidesUnlessTold() {
        let never = TraceSampler(ratio: 0)
        #expect(never.samples(traceID: Self.traceID(low: 5), parentSampled: true))
        #expect(!TraceSampler(ratio: 1).samples(traceID: Self.traceID(low: 5), parentSampled: false))
        let own = TraceSampler(ratio: 0, followParent: false)
        #expect(!own.samples(traceID: Self.traceID(low: 5), parentSampled: true))
    }

    @Test func aRatioSamplesAboutItsShareOfRandomTraces() {
        var generator = SystemRandomNumberGenerator()
        let sampler = TraceSampler(ratio: 0.25)
        let n = 20_000
        let kept = (0..<n).filter { _ in
            sampler.samples(traceID: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, parentSampled: nil)
        }.count
        // 25% ± 2 points: over 9 standard deviations (σ ≈ 0.31 points for 20,000 draws).
        #expect(abs(Double(kept) / Double(n) - 0.25) < 0.02)
    }

    @Test func aTraceparentIsFollowedAndAMalformedOneIgnored() {
        let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        let start = TraceStart.begin(traceparent: parent, tracestate: "vendor=x", sampler: TraceSampler(ratio: 0))
        #expect(start.sampled)
        #expect(start.traceparent.hasPrefix("00-0af7651916cd43dd8448eb211c80319c-"))
        #expect(start.parentSpanID == [0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31])
        #expect(start.traceState == "vendor=x")
        #expect(start.spanID.count == 8 && start.spanID != start.parentSpanID)

        let unsampled = TraceStart.begin(traceparent: String(parent.dropLast(2)) + "00", tracestate: nil, sampler: TraceSampler(ratio: 1))
        #expect(!unsampled.sampled)

        let hostile = [String(repeating: "0", count: 100_000), "00-\u{301}0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                       "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-" + String(repeating: "é", count: 5000),
                       "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033\u{0}1-01"]
        for bad in hostile + ["", "garbage", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                    "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01x"] {
            let fresh = TraceStart.begin(traceparent: bad, tracestate: nil, sampler: TraceSampler(ratio: 1))
            #expect(fresh.parentSpanID.isEmpty, "\(bad)")
            #expect(fresh.traceID.count == 16 && fresh.traceID != [UInt8](repeating: 0, count: 16))
            #expect(fresh.sampled)
        }
    }
}

@Suite struct SpanIDGeneratorTests {
    @Test func idsAreValidAndDoNotRepeat() {
        var generator = SpanIDGenerator()
        var seen = Set<[UInt8]>()
        for _ in 0..<10_000 {
            let id = TraceStart.newSpanID(using: &generator)
            #expect(id.count == 8 && id != [UInt8](repeating: 0, count: 8))
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        // Two generators are seeded apart.
        var other = SpanIDGenerator()
        #expect(TraceStart.newSpanID(using: &other) != TraceStart.newSpanID(using: &generator))
    }

    @Test func theSamplerSeesTheSameBitsWhateverMadeTheID() {
        var generator = SpanIDGenerator()
        var kept = 0
        for _ in 0..<20_000 {
            let start = TraceStart.begin(traceparent: nil, tracestate: nil, sampler: TraceSampler(ratio: 0.1), using: &generator)
            if start.sampled { kept += 1 }
        }
        // 10% ± 1.5 points (σ ≈ 0.21 points).
        #expect(abs(Double(kept) / 20_000 - 0.1) < 0.015)
    }
}
