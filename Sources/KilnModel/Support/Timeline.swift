import KilnPOSIX

/// Durations of the stages of one request (Nuke's per-task metrics), for `Server-Timing` and logs,
/// and when each ran (`intervals`, monotonic nanoseconds), for traces: every `mark` is both.
public struct Timeline: Sendable {
    /// One stage as it ran: a trace's child span (`RequestTracer`). Phases add up by name; intervals
    /// stay one per run (an encode retried by `max_bytes` is one interval).
    public struct Interval: Sendable, Equatable {
        public var name: String
        /// Monotonic nanoseconds (`Timeline.now()`).
        public var start: UInt64
        public var end: UInt64

        public init(name: String, start: UInt64, end: UInt64) {
            self.name = name
            self.start = start
            self.end = max(start, end)
        }
    }

    public struct Phase: Sendable, Equatable {
        public var name: String
        public var milliseconds: Double
        /// `Server-Timing`'s `desc` (e.g. the encodes of `max_bytes`); nil: none.
        public var description: String? = nil
    }

    public private(set) var phases: [Phase] = []
    public private(set) var intervals: [Interval] = []
    private var last: UInt64

    public init() { last = Timeline.now() }

    /// Monotonic nanoseconds.
    public static func now() -> UInt64 {
        MonotonicClock.nanoseconds()
    }

    /// Records the time since the previous mark (or the start) under `name`.
    public mutating func mark(_ name: String) {
        let t = Timeline.now()
        add(name, milliseconds: Double(t - last) / 1_000_000)
        intervals.append(Interval(name: name, start: last, end: t))
        last = t
    }

    /// Adds the phase `name` that ran from `start` to now (monotonic nanoseconds), measured apart
    /// from the marks (which it does not move).
    public mutating func record(_ name: String, since start: UInt64) {
        let t = Timeline.now()
        add(name, milliseconds: Double(t - min(t, start)) / 1_000_000)
        intervals.append(Interval(name: name, start: start, end: t))
    }

    /// Adds the phases and intervals of `other` (a stage's own timeline).
    public mutating func append(_ other: Timeline) {
        for phase in other.phases { add(phase) }
        intervals += other.intervals
    }

    /// Adds intervals measured elsewhere (the caches' reads and writes) for traces only: they
    /// overlap the phases, so they stay out of `Server-Timing`.
    public mutating func append(intervals more: [Interval]) {
        intervals += more
    }

    /// Adds a phase measured elsewhere; phases of the same name add up.
    public mutating func add(_ name: String, milliseconds: Double) {
        if let i = phases.firstIndex(where: { $0.name == name }) {
            phases[i].milliseconds += milliseconds
        } else {
            phases.append(Phase(name: name, milliseconds: milliseconds))
        }
    }

    /// Adds `phase` (a phase of another timeline), its description with it.
    public mutating func add(_ phase: Phase) {
        add(phase.name, milliseconds: phase.milliseconds)
        if let d = phase.description { describe(phase.name, d) }
    }

    /// Sets the description of the phase `name` (sent as `desc`); nothing when there is no such phase.
    public mutating func describe(_ name: String, _ text: String) {
        if let i = phases.firstIndex(where: { $0.name == name }) { phases[i].description = text }
    }

    public var totalMilliseconds: Double { phases.reduce(0) { $0 + $1.milliseconds } }

    /// `load;dur=0.12, decode;dur=41.3, encode;dur=9.1;desc="encodes=3 q=62 over=63", ...` (W3C
    /// Server-Timing; descriptions are Kiln's own words: no quotes or backslashes in them).
    public var serverTimingHeader: String {
        (phases + [Phase(name: "total", milliseconds: totalMilliseconds)])
            .map { "\($0.name);dur=\(Timeline.format($0.milliseconds))" + ($0.description.map { ";desc=\"\($0)\"" } ?? "") }
            .joined(separator: ", ")
    }

    static func format(_ ms: Double) -> String {
        let scaled = (ms * 100).rounded() / 100
        return String(scaled)
    }
}
