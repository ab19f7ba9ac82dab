/// The protocol-buffers wire format, writing only (https://protobuf.dev/programming-guides/encoding/):
/// varints, 64- and 32-bit fixed fields and length-delimited fields (strings, bytes, nested
/// messages). Enough for OTLP's trace request (`OTLPTraceEncoder`); the integration tests decode
/// what it writes with the official `opentelemetry-proto` classes.
///
/// Fields at their proto3 default (0, empty) are skipped by the `…IfSet` writers, as generated
/// code does; inside a `oneof` (OTLP's `AnyValue`) a value must be written even when it is the
/// default, so those writers have no such check.
struct ProtobufWriter {
    enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    private(set) var bytes: [UInt8] = []

    mutating func tag(_ field: Int, _ wire: WireType) {
        varint(UInt64(field) << 3 | wire.rawValue)
    }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// A length-delimited field: `payload` as it is.
    mutating func lengthDelimited(_ field: Int, _ payload: some Collection<UInt8>) {
        tag(field, .lengthDelimited)
        varint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }

    mutating func string(_ field: Int, _ value: String) {
        lengthDelimited(field, value.utf8)
    }

    mutating func stringIfSet(_ field: Int, _ value: String) {
        if !value.isEmpty { string(field, value) }
    }

    mutating func bytesIfSet(_ field: Int, _ value: [UInt8]) {
        if !value.isEmpty { lengthDelimited(field, value) }
    }

    /// int64, int32, uint32, bool and enum fields are varints (negative int64: two's complement).
    mutating func int64(_ field: Int, _ value: Int64) {
        tag(field, .varint)
        varint(UInt64(bitPattern: value))
    }

    mutating func varintIfSet(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(value)
    }

    mutating func bool(_ field: Int, _ value: Bool) {
        tag(field, .varint)
        varint(value ? 1 : 0)
    }

    mutating func fixed64IfSet(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .fixed64)
        appendLittleEndian(value, bytes: 8)
    }

    mutating func fixed32IfSet(_ field: Int, _ value: UInt32) {
        guard value != 0 else { return }
        tag(field, .fixed32)
        appendLittleEndian(UInt64(value), bytes: 4)
    }

    mutating func double(_ field: Int, _ value: Double) {
        tag(field, .fixed64)
        appendLittleEndian(value.bitPattern, bytes: 8)
    }

    /// A nested message, written by `build` into a writer of its own.
    mutating func message(_ field: Int, _ build: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        build(&inner)
        lengthDelimited(field, inner.bytes)
    }

    private mutating func appendLittleEndian(_ value: UInt64, bytes count: Int) {
        for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }
}
