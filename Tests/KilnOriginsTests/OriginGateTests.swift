import KilnPOSIX
import Testing
@testable import KilnOrigins
@testable import KilnPipeline

/// The token bucket and the slots of `OriginGate` (across processes in
/// Tests/integration/test_remote_limits.py; here the arithmetic, in one process).
struct OriginGateTests {
    func gate(concurrency: Int = 0, rate: Double, burst: Int, index: Int = 0, file: RecordLockFile? = nil) throws -> OriginGate {
        let file = try #require(file ?? RecordLockFile.anonymous())
        return OriginGate(file: file, index: index, limits: .init(concurrency: concurrency, rate: rate, burst: burst))
    }

    @Test func aFullBucketLetsTheBurstThroughThenOneTokenPerInterval() throws {
        let g = try gate(rate: 10, burst: 3)
        let t = 1000.0
        #expect(g.takeToken(now: t) == 0)
        #expect(g.takeToken(now: t) == 0)
        #expect(g.takeToken(now: t) == 0)
        let wait = g.takeToken(now: t)
        #expect(abs(wait - 0.1) < 1e-9)
        // 50 ms later half a token has come back: 50 ms more to wait.
        #expect(abs(g.takeToken(now: t + 0.05) - 0.05) < 1e-9)
        #expect(g.takeToken(now: t + 0.1) == 0)
        // A long quiet time refills no more than the burst.
        let later = t + 100
        for _ in 0..<3 { #expect(g.takeToken(now: later) == 0) }
        #expect(g.takeToken(now: later) > 0)
    }

    @Test func originsKeepTheirOwnBucketsInOneFile() throws {
        let file = try #require(RecordLockFile.anonymous())
        let a = try gate(rate: 1, burst: 1, index: 0, file: file)
        let b = try gate(rate: 1, burst: 1, index: 1, file: file)
        #expect(a.takeToken(now: 5) == 0)
        #expect(a.takeToken(now: 5) > 0)
        #expect(b.takeToken(now: 5) == 0)
    }

    @Test func enterWaitsForATokenAndGivesUpAtTheDeadline() throws {
        let g = try gate(rate: 20, burst: 1)
        let start = MonotonicClock.seconds()
        let first = try #require(g.enter(until: start + 1))
        first.release()
        let second = try #require(g.enter(until: start + 1))
        #expect(second.waited > 0.02)
        second.release()
        // The next token is 50 ms away: a deadline 10 ms out is missed without sleeping past it.
        #expect(g.enter(until: MonotonicClock.seconds() + 0.01) == nil)
    }

    @Test func withoutLimitsEnterNeverWaits() throws {
        let g = try gate(concurrency: 0, rate: 0, burst: 1)
        let permit = try #require(g.enter(until: 0))
        #expect(permit.waited < 0.01)
    }
}
