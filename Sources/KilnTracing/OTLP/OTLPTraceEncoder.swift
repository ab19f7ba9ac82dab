import KilnModel

/// OTLP's `ExportTraceServiceRequest` (opentelemetry-proto v1, `collector/trace/v1/trace_service.proto`)
/// in protobuf, the body of an OTLP/HTTP export (`Content-Type: application/x-protobuf`): one
/// `ResourceSpans` with the resource's attributes, one `ScopeSpans` for Kiln, then the spans.
///
///     ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
///     ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
///     Resource      { repeated KeyValue attributes = 1; }
///     ScopeSpans    { InstrumentationScope scope = 1; repeated Span spans = 2; }
///     InstrumentationScope { string name = 1; string version = 2; }
///     Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
///            string name = 5; SpanKind kind = 6; fixed64 start_time_unix_nano = 7;
///            fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; Status status = 15;
///            fixed32 flags = 16; }            // 0x1 sampled, 0x100 remoteness known, 0x200 remote
///     Status   { string message = 2; StatusCode code = 3; }      // code 2: ERROR
///     KeyValue { string key = 1; AnyValue value = 2; }
///     AnyValue { oneof { string string_value = 1; bool bool_value = 2; int64 int_value = 3;
///                        double double_value = 4; } }
public enum OTLPTraceEncoder {
    /// The instrumentation scope every Kiln span belongs to.
    public static let scopeName = "kiln"

    public static func encode(resource: TraceFacts, spans: [SpanRecord], scopeVersion: String = "") -> [UInt8] {
        var request = ProtobufWriter()
        request.message(1) { resourceSpans in
            resourceSpans.message(1) { r in
                for fact in resource.facts { r.message(1) { keyValue(&$0, fact) } }
            }
            resourceSpans.message(2) { scopeSpans in
                scopeSpans.message(1) { scope in
                    scope.string(1, scopeName)
                    scope.stringIfSet(2, scopeVersion)
                }
                for span in spans { scopeSpans.message(2) { encode(&$0, span) } }
            }
        }
        return request.bytes
    }

    static func encode(_ w: inout ProtobufWriter, _ span: SpanRecord) {
        w.bytesIfSet(1, span.traceID)
        w.bytesIfSet(2, span.spanID)
        w.stringIfSet(3, span.traceState)
        w.bytesIfSet(4, span.parentSpanID)
        w.string(5, span.name)
        w.varintIfSet(6, UInt64(span.kind.rawValue))
        w.fixed64IfSet(7, span.start)
        w.fixed64IfSet(8, span.end)
        for fact in span.attributes.facts { w.message(9) { keyValue(&$0, fact) } }
        if case let .error(message) = span.status {
            w.message(15) { status in
                status.stringIfSet(2, message)
                status.varintIfSet(3, 2)
            }
        }
        // Flags: the trace flags' sampled bit, "whether the parent is remote is known" (0x100) and
        // "remote" (0x200) for a span whose parent came in a `traceparent`.
        w.fixed32IfSet(16, 0x101 | (span.remoteParent ? 0x200 : 0))
    }

    static func keyValue(_ w: inout ProtobufWriter, _ fact: TraceFacts.Fact) {
        w.string(1, fact.key)
        w.message(2) { value in
            switch fact.value {
            case .string(let s): value.string(1, s)
            case .bool(let b): value.bool(2, b)
            case .int(let i): value.int64(3, Int64(i))
            case .double(let d): value.double(4, d)
            }
        }
    }
}
