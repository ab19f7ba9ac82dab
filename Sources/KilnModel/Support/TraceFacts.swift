/// What a trace's request span says about its answer beyond HTTP (`RequestTracer` in KilnServer
/// turns it into OpenTelemetry attributes): the variant, the cache outcome, the sizes. Typed
/// key/value pairs in the order they were set; a key set twice keeps its last value.
///
/// Keys follow OpenTelemetry's naming (`kiln.` for Kiln's own: `kiln.variant`, `kiln.cache`,
/// `kiln.source.bytes`, `kiln.output.bytes`, `kiln.output.format`); docs/tracing.md lists them.
public struct TraceFacts: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
    }

    public struct Fact: Sendable, Equatable {
        public var key: String
        public var value: Value

        public init(key: String, value: Value) {
            self.key = key
            self.value = value
        }
    }

    public private(set) var facts: [Fact] = []

    public init() {}

    public subscript(key: String) -> Value? {
        get { facts.first { $0.key == key }?.value }
        set {
            if let i = facts.firstIndex(where: { $0.key == key }) {
                if let newValue { facts[i].value = newValue } else { facts.remove(at: i) }
            } else if let newValue {
                facts.append(Fact(key: key, value: newValue))
            }
        }
    }

    public var isEmpty: Bool { facts.isEmpty }

    /// The facts of `other` after these (its values win).
    public mutating func merge(_ other: TraceFacts) {
        for fact in other.facts { self[fact.key] = fact.value }
    }
}
