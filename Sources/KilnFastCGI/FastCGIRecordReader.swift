/// One FastCGI request as a responder gets it: its id, whether the web server keeps the connection
/// (FCGI_KEEP_CONN), its params and how many bytes of STDIN it sent (read and dropped: Kiln
/// serves GET and HEAD).
public struct FastCGIRequest: Equatable, Sendable {
    public var id: Int
    public var keepConnection: Bool
    public var params: [String: String]
    public var stdinBytes: Int
    /// The bytes of the params whose values are not valid UTF-8 (in `params` with U+FFFD), by name.
    public var nonUTF8Params: [String: [UInt8]] = [:]
}

/// Reads FastCGI records from the bytes a connection delivers, in whatever pieces they come, and
/// turns them into one request at a time (FastCGI 1.0; no multiplexing). Pure: no I/O, so it can
/// be tested and fuzzed over bytes.
///
/// A request is complete after BEGIN_REQUEST (role RESPONDER), PARAMS up to the empty PARAMS record
/// and STDIN up to the empty STDIN record. Along the way it answers what needs no handler:
/// - FCGI_GET_VALUES: FCGI_MAX_CONNS 1, FCGI_MAX_REQS 1, FCGI_MPXS_CONNS 0; any other management
///   record: FCGI_UNKNOWN_TYPE.
/// - BEGIN_REQUEST for AUTHORIZER or FILTER: END_REQUEST with FCGI_UNKNOWN_ROLE (section 5.1); its
///   PARAMS and STDIN are ignored, and without FCGI_KEEP_CONN the connection closes after.
/// - BEGIN_REQUEST for a second id while one is read: END_REQUEST with FCGI_CANT_MPX_CONN.
/// - ABORT_REQUEST for the request being read: END_REQUEST (complete) and the request is dropped.
/// Records for ids that are not active are ignored (section 3.3). Everything else out of place,
/// a version other than 1, or more than the limits allow throws `FastCGIProtocolError`.
public struct FastCGIRequestParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Bytes of PARAMS content per request (nginx sends a few KB).
        public var maxParamsBytes = 1 << 20
        /// Name-value pairs per request.
        public var maxParams = 16_384
        /// Records per request, management records and ignored ones included.
        public var maxRecords = 1 << 16

        public init(maxParamsBytes: Int = 1 << 20, maxParams: Int = 16_384, maxRecords: Int = 1 << 16) {
            self.maxParamsBytes = maxParamsBytes
            self.maxParams = maxParams
            self.maxRecords = maxRecords
        }
    }

    /// What one `feed` produced.
    public struct Output: Equatable, Sendable {
        /// Records to write now (management answers, refusals), before anything else.
        public var replies: [UInt8] = []
        /// A complete request; the parser reads nothing more until `feed` is called again.
        public var request: FastCGIRequest?
        /// Close the connection once `replies` are written (a refused request without
        /// FCGI_KEEP_CONN).
        public var close = false
    }

    private enum State {
        case awaitingBegin
        case params
        case stdin
        /// A request was handed out or the connection is to close: records wait in `pending`.
        case delivered
    }

    public let limits: Limits
    private var state = State.awaitingBegin
    private var pending: [UInt8] = []
    private var start = 0
    private var activeID = 0
    private var keepConnection = false
    private var paramsBytes: [UInt8] = []
    private var params: [String: String] = [:]
    private var nonUTF8Params: [String: [UInt8]] = [:]
    private var stdinBytes = 0
    private var records = 0
    private var closing = false

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether bytes of a request (or of anything) have arrived since the last request was handed
    /// out: an idle kept-alive connection has none.
    public var hasPartialRequest: Bool { state != .awaitingBegin || start < pending.count || records > 0 }

    /// Bytes received and not yet consumed as whole records.
    public var bufferedBytes: Int { pending.count - start }

    /// Adds `bytes` and reads every whole record, stopping after a complete request.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(FastCGIProtocolError) -> Output {
        if state == .delivered && !closing { state = .awaitingBegin }
        if start > 0 && (start >= pending.count || start > 1 << 16) {
            pending.removeFirst(start)
            start = 0
        }
        pending.append(contentsOf: bytes)
        var out = Output()
        while state != .delivered {
            guard pending.count - start >= FastCGI.headerLength else { break }
            let h = start
            guard pending[h] == FastCGI.version else { throw .unsupportedVersion(pending[h]) }
            let type = pending[h + 1]
            let id = Int(pending[h + 2]) << 8 | Int(pending[h + 3])
            let contentLength = Int(pending[h + 4]) << 8 | Int(pending[h + 5])
            let total = FastCGI.headerLength + contentLength + Int(pending[h + 6])
            guard pending.count - start >= total else { break }
            records += 1
            guard records <= limits.maxRecords else { throw .tooLarge("more than \(limits.maxRecords) records") }
            let contentStart = h + FastCGI.headerLength
            start += total
            // `record` never changes `pending`: reading a second reference to it costs no copy
            // and keeps the access to `self` exclusive.
            let stored = pending
            var copy = out
            let result = stored.withUnsafeBytes { raw -> Result<Void, FastCGIProtocolError> in
                let content = UnsafeRawBufferPointer(rebasing: raw[contentStart..<contentStart + contentLength])
                do throws(FastCGIProtocolError) {
                    try record(type: type, id: id, content: content, into: &copy)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            out = copy
            try result.get()
        }
        if start == pending.count {
            pending.removeAll(keepingCapacity: true)
            start = 0
        }
        return out
    }

    /// Convenience over arrays (tests, fuzzing).
    public mutating func feed(_ bytes: [UInt8]) throws(FastCGIProtocolError) -> Output {
        var copy = self
        let result = bytes.withUnsafeBytes { raw -> Result<Output, FastCGIProtocolError> in
            do throws(FastCGIProtocolError) { return .success(try copy.feed(raw)) } catch { return .failure(error) }
        }
        self = copy
        return try result.get()
    }

    private mutating func record(type: UInt8, id: Int, content: UnsafeRawBufferPointer,
                                 into out: inout Output) throws(FastCGIProtocolError) {
        if id == FastCGI.managementID {
            management(type: type, content: content, into: &out)
            return
        }
        let active = (state == .params || state == .stdin) && id == activeID
        switch type {
        case FastCGI.RecordType.beginRequest:
            try begin(id: id, content: content, into: &out)
        case FastCGI.RecordType.abortRequest where active:
            out.replies += FastCGIRecords.endRequest(requestID: id, protocolStatus: FastCGI.ProtocolStatus.requestComplete)
            finish(delivered: false, keep: keepConnection, into: &out)
        case FastCGI.RecordType.params where active:
            guard state == .params else { throw .unexpectedRecord(type: type, requestID: id) }
            if content.isEmpty {
                let limit = limits.maxParams
                var nonUTF8: [String: [UInt8]] = [:]
                params = try paramsBytes.withUnsafeBytes { raw -> Result<[String: String], FastCGIProtocolError> in
                    do throws(FastCGIProtocolError) {
                        return .success(try FastCGINameValuePairs.decode(raw, maxPairs: limit, nonUTF8: &nonUTF8))
                    } catch {
                        return .failure(error)
                    }
                }.get()
                nonUTF8Params = nonUTF8
                paramsBytes = []
                state = .stdin
            } else {
                guard content.count <= limits.maxParamsBytes - paramsBytes.count else {
                    throw .tooLarge("more than \(limits.maxParamsBytes) bytes of params")
                }
                paramsBytes.append(contentsOf: content)
            }
        case FastCGI.RecordType.stdin where active:
            guard state == .stdin else { throw .unexpectedRecord(type: type, requestID: id) }
            if content.isEmpty {
                out.request = FastCGIRequest(id: activeID, keepConnection: keepConnection, params: params, stdinBytes: stdinBytes,
                                             nonUTF8Params: nonUTF8Params)
                params = [:]
                nonUTF8Params = [:]
                finish(delivered: true, keep: true, into: &out)
            } else {
                stdinBytes += content.count
            }
        case FastCGI.RecordType.abortRequest, FastCGI.RecordType.params, FastCGI.RecordType.stdin,
             FastCGI.RecordType.data:
            // An inactive (or refused) id: ignored. DATA for the active request: a responder gets none.
            guard !active else { throw .unexpectedRecord(type: type, requestID: id) }
        default:
            throw .unexpectedRecord(type: type, requestID: id)
        }
    }

    private mutating func begin(id: Int, content: UnsafeRawBufferPointer, into out: inout Output) throws(FastCGIProtocolError) {
        guard content.count >= 8 else { throw .malformed("BEGIN_REQUEST body (\(content.count) bytes, 8 expected)") }
        if state == .params || state == .stdin {
            guard id != activeID else { throw .unexpectedRecord(type: FastCGI.RecordType.beginRequest, requestID: id) }
            out.replies += FastCGIRecords.endRequest(requestID: id, protocolStatus: FastCGI.ProtocolStatus.cantMultiplexConnection)
            return
        }
        let role = Int(content[0]) << 8 | Int(content[1])
        let keep = content[2] & FastCGI.keepConnection != 0
        guard role == FastCGI.Role.responder else {
            out.replies += FastCGIRecords.endRequest(requestID: id, protocolStatus: FastCGI.ProtocolStatus.unknownRole)
            if !keep { finish(delivered: false, keep: false, into: &out) }
            return
        }
        activeID = id
        keepConnection = keep
        paramsBytes = []
        params = [:]
        nonUTF8Params = [:]
        stdinBytes = 0
        state = .params
    }

    /// The request (or a refused or aborted one) is over. Reading stops after a delivered request
    /// (until the next `feed`) or for good when the connection is to close (`keep` false);
    /// otherwise it goes on with the next request.
    private mutating func finish(delivered: Bool, keep: Bool, into out: inout Output) {
        records = 0
        state = delivered || !keep ? .delivered : .awaitingBegin
        if !keep {
            closing = true
            out.close = true
        }
    }

    private mutating func management(type: UInt8, content: UnsafeRawBufferPointer, into out: inout Output) {
        guard type == FastCGI.RecordType.getValues else {
            out.replies += FastCGIRecords.record(type: FastCGI.RecordType.unknownType, requestID: FastCGI.managementID,
                                                 content: [type, 0, 0, 0, 0, 0, 0, 0])
            return
        }
        // A malformed query gets the answers it could name (none): GET_VALUES cannot fail.
        let asked = (try? FastCGINameValuePairs.names(content, maxPairs: 64)) ?? []
        var seen = Set<String>()
        let answers = asked.compactMap { name -> (String, String)? in
            guard let value = FastCGI.values[name], seen.insert(name).inserted else { return nil }
            return (name, value)
        }
        out.replies += FastCGIRecords.record(type: FastCGI.RecordType.getValuesResult, requestID: FastCGI.managementID,
                                             content: FastCGINameValuePairs.encode(answers))
    }
}
