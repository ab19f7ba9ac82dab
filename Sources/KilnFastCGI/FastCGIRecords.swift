/// FastCGI records (FastCGI 1.0, section 3.3) built in one buffer, so that a whole answer (its
/// STDOUT records, the empty STDOUT record that ends the stream, and FCGI_END_REQUEST) leaves in a
/// single `write` whatever its size.
///
/// Each record is an 8-byte header (version 1, type, request id, content length, no padding) and
/// at most 65 535 bytes of content.
public struct FastCGIRecords {
    public static let stdoutType: UInt8 = 6
    /// Content per record: the largest multiple of 8 that fits the 16-bit length.
    public static let maxContent = 65_528

    public let requestID: Int
    public private(set) var bytes: [UInt8] = []

    public init(requestID: Int) {
        self.requestID = requestID
    }

    public mutating func reserve(payload: Int) {
        bytes.reserveCapacity(payload + (payload / FastCGIRecords.maxContent + 2) * 8)
    }

    /// Appends `content` as as many STDOUT records as it needs (none when it is empty: an empty
    /// record would end the stream).
    public mutating func appendStdout(_ content: UnsafeBufferPointer<UInt8>) {
        var offset = 0
        while offset < content.count {
            let n = min(FastCGIRecords.maxContent, content.count - offset)
            bytes += [1, FastCGIRecords.stdoutType, UInt8(requestID >> 8 & 0xff), UInt8(requestID & 0xff),
                      UInt8(n >> 8), UInt8(n & 0xff), 0, 0]
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: content[offset..<offset + n]))
            offset += n
        }
    }

    /// Ends the answer: the empty STDOUT record, then FCGI_END_REQUEST (complete, `appStatus`).
    public mutating func appendEnd(appStatus: UInt32 = 0) {
        bytes += FastCGIRecords.record(type: FastCGIRecords.stdoutType, requestID: requestID, content: [])
        bytes += FastCGIRecords.endRequest(requestID: requestID, appStatus: appStatus,
                                           protocolStatus: FastCGI.ProtocolStatus.requestComplete)
    }

    /// One record with `content` (at most 65 535 bytes), padded to a multiple of 8.
    public static func record(type: UInt8, requestID: Int, content: [UInt8]) -> [UInt8] {
        precondition(content.count <= 65_535)
        let padding = (8 - content.count % 8) % 8
        return [FastCGI.version, type, UInt8(requestID >> 8 & 0xff), UInt8(requestID & 0xff),
                UInt8(content.count >> 8), UInt8(content.count & 0xff), UInt8(padding), 0]
            + content + [UInt8](repeating: 0, count: padding)
    }

    /// FCGI_END_REQUEST (section 5.5): the application's status and the protocol status.
    public static func endRequest(requestID: Int, appStatus: UInt32 = 0, protocolStatus: UInt8) -> [UInt8] {
        record(type: FastCGI.RecordType.endRequest, requestID: requestID,
               content: [UInt8(appStatus >> 24 & 0xff), UInt8(appStatus >> 16 & 0xff), UInt8(appStatus >> 8 & 0xff),
                         UInt8(appStatus & 0xff), protocolStatus, 0, 0, 0])
    }
}
