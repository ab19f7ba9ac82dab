import KilnHTTP
import KilnModel

/// The `[limits]` keys the process layer enforces (the pipeline's own limits are KilnPipeline's
/// `LimitsConfiguration`): how long a request may run before its worker is killed, when a slow one
/// is logged, and how large a worker may grow before it is replaced.
public struct WorkerLimitsConfiguration: ConfigSection, Equatable {
    /// Seconds a request may take from its arrival at a worker to its answer before the master kills
    /// the worker (a decoder loop cannot be cancelled from inside); 0: no deadline.
    public var renderTimeout: Double = Key.renderTimeout.defaultValue
    /// Seconds after which the master logs a request still running, with its stage; 0: never.
    public var slowLogAfter: Double = Key.slowLogAfter.defaultValue
    /// Resident memory in bytes past which a worker exits after its request and is replaced; 0: no limit.
    public var maxWorkerMemory: Int = Key.maxWorkerMemory.defaultValue

    public enum Key {
        public static let renderTimeout = Setting.duration(
            "limits.render_timeout", default: 10, in: 0...3600,
            doc: "a request still running this long after it reached a worker is stopped: the master kills the worker (nginx answers 502) and logs the URL and stage; 0: no deadline")
        public static let slowLogAfter = Setting.duration(
            "limits.slow_log_after", default: 5, in: 0...3600,
            doc: "the master logs a request still running this long, with its stage (php-fpm's slow log); 0: never")
        public static let maxWorkerMemory = Setting.size(
            "limits.max_worker_memory", default: 1 << 30, in: 0...(1 << 40),
            doc: "a worker whose resident memory (RSS) is above this after a request exits and is replaced; 0: no limit")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.renderTimeout) { $0.renderTimeout = $1 },
        ConfigField(Key.slowLogAfter) { $0.slowLogAfter = $1 },
        ConfigField(Key.maxWorkerMemory) { $0.maxWorkerMemory = $1 },
    ]

    public init() {}
}
