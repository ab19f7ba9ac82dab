import KilnModel
import Testing

@testable import KilnTracing

/// Byte-exact checks of the wire format against the protobuf encoding rules; the integration
/// test (Tests/integration/test_tracing.py) decodes whole requests with opentelemetry-proto.
@Suite struct OTLPTraceEncoderTests {
    @Test func varintsAndFixedFieldsFollowTheWireFormat() {
        var w = ProtobufWriter()
        w.varintIfSet(1, 150)
        #expect(w.bytes == [0x08, 0x96, 0x01])
        w = ProtobufWriter()
        w.int64(3, -1)
        #expect(w.bytes == [0x18] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
        w = ProtobufWriter()
        w.fixed64IfSet(7, 0x0102_0304_0506_0708)
        #expect(w.bytes == [0x39, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        w = ProtobufWriter()
        w.varintIfSet(6, 0)
        w.stringIfSet(5, "")
        #expect(w.bytes.isEmpty)
    }

    @Test func attributesAreKeyValuesWithAnyValues() {
        var w = ProtobufWriter()
        OTLPTraceEncoder.keyValue(&w, TraceFacts.Fact(key: "a", value: .int(1)))
        #expect(w.bytes == [0x0A, 0x01, 0x61, 0x12, 0x02, 0x18, 0x01])
        w = ProtobufWriter()
        // A oneof member at its default is still written (presence).
        OTLPTraceEncoder.keyValue(&w, TraceFacts.Fact(key: "b", value: .bool(false)))
        #expect(w.bytes == [0x0A, 0x01, 0x62, 0x12, 0x02, 0x10, 0x00])
        w = ProtobufWriter()
        OTLPTraceEncoder.keyValue(&w, TraceFacts.Fact(key: "s", value: .string("")))
        #expect(w.bytes == [0x0A, 0x01, 0x73, 0x12, 0x02, 0x0A, 0x00])
    }

    @Test func aSpanCarriesItsIdsTimesKindAndFlags() {
        let span = SpanRecord(traceID: [UInt8](repeating: 0xAA, count: 16), spanID: [UInt8](repeating: 0xBB, count: 8),
                              parentSpanID: [UInt8](repeating: 0xCC, count: 8), name: "GET", kind: .server,
                              start: 5, end: 9, status: .error("boom"), remoteParent: true)
        var w = ProtobufWriter()
        OTLPTraceEncoder.encode(&w, span)
        let b = w.bytes
        #expect(Array(b.prefix(18)) == [0x0A, 0x10] + [UInt8](repeating: 0xAA, count: 16))
        #expect(Array(b[18..<28]) == [0x12, 0x08] + [UInt8](repeating: 0xBB, count: 8))
        #expect(Array(b[28..<38]) == [0x22, 0x08] + [UInt8](repeating: 0xCC, count: 8))
        #expect(Array(b[38..<43]) == [0x2A, 0x03, 0x47, 0x45, 0x54])  // name "GET"
        #expect(Array(b[43..<45]) == [0x30, 0x02])  // kind SERVER
        #expect(Array(b[45..<54]) == [0x39, 5, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(b[54..<63]) == [0x41, 9, 0, 0, 0, 0, 0, 0, 0])
        // status { message "boom", code ERROR }, flags 0x301
        #expect(Array(b[63...]) == [0x7A, 0x08, 0x12, 0x04, 0x62, 0x6F, 0x6F, 0x6D, 0x18, 0x02, 0x85, 0x01, 0x01, 0x03, 0x00, 0x00])
    }
}
