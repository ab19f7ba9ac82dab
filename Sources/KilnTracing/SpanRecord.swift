import KilnModel

/// One finished span, ready for export: OTLP's `Span` with what Kiln fills in. Ids are raw bytes
/// (16 for the trace, 8 for spans; an empty parent is a root).
public struct SpanRecord: Sendable, Equatable {
    /// OTLP's `SpanKind` numbers.
    public enum Kind: Int, Sendable {
        case `internal` = 1
        case server = 2
        case client = 3
    }

    /// OTLP's `Status`: unset, or an error with its message.
    public enum Status: Sendable, Equatable {
        case unset
        case error(String)
    }

    public var traceID: [UInt8]
    public var spanID: [UInt8]
    public var parentSpanID: [UInt8]
    /// The W3C `tracestate` the span carries on (empty: none).
    public var traceState: String
    public var name: String
    public var kind: Kind
    /// Unix nanoseconds.
    public var start: UInt64
    public var end: UInt64
    public var attributes: TraceFacts
    public var status: Status
    /// Whether the parent is another process's span (a `traceparent`'s), not one of this trace's.
    public var remoteParent: Bool

    public init(traceID: [UInt8], spanID: [UInt8], parentSpanID: [UInt8] = [], traceState: String = "", name: String,
                kind: Kind, start: UInt64, end: UInt64, attributes: TraceFacts = TraceFacts(), status: Status = .unset,
                remoteParent: Bool = false) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.traceState = traceState
        self.name = name
        self.kind = kind
        self.start = start
        self.end = max(start, end)
        self.attributes = attributes
        self.status = status
        self.remoteParent = remoteParent
    }
}
