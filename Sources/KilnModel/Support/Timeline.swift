import KilnPOSIX

/// Durations of the stages of one request (Nuke's per-task metrics), for `Server-Timing` and logs.
public struct Timeline: Sendable {
    public struct Phase: Sendable, Equatable {
        public var name: String
        public var milliseconds: Double
        /// `Server-Timing`'s `desc` (e.g. the encodes of `max_bytes`); nil: none.
        public var description: String? = nil
    }

    public private(set) var phases: [Phase] = []
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
        last = t
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
