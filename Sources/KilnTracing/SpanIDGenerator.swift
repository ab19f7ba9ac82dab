/// The random numbers of a worker's trace and span ids: xoshiro256** (Blackman and Vigna),
/// seeded once from the system's generator. OpenTelemetry asks ids to be random, not secret;
/// the system generator costs a `getrandom` call per id (about 1 % of a traced hit's time, measured
/// with `perf`), this a few instructions. One per request thread (not `Sendable`).
public struct SpanIDGenerator: RandomNumberGenerator {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    public init() {
        var system = SystemRandomNumberGenerator()
        s = (system.next(), system.next(), system.next(), system.next())
        if s == (0, 0, 0, 0) { s.0 = 1 }
    }

    public mutating func next() -> UInt64 {
        let result = rotl(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = rotl(s.3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
