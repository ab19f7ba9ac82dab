/// The numbers of the FastCGI 1.0 specification that Kiln uses (record types, roles, flags and
/// protocol statuses), and the errors of a connection that breaks the protocol.
public enum FastCGI {
    public static let version: UInt8 = 1
    public static let headerLength = 8
    /// Request id 0 carries management records (section 3.3).
    public static let managementID = 0

    public enum RecordType {
        public static let beginRequest: UInt8 = 1
        public static let abortRequest: UInt8 = 2
        public static let endRequest: UInt8 = 3
        public static let params: UInt8 = 4
        public static let stdin: UInt8 = 5
        public static let stdout: UInt8 = 6
        public static let stderr: UInt8 = 7
        public static let data: UInt8 = 8
        public static let getValues: UInt8 = 9
        public static let getValuesResult: UInt8 = 10
        public static let unknownType: UInt8 = 11
    }

    public enum Role {
        public static let responder = 1
        public static let authorizer = 2
        public static let filter = 3
    }

    /// FCGI_BEGIN_REQUEST's flags: keep the connection open after the answer.
    public static let keepConnection: UInt8 = 1

    /// FCGI_END_REQUEST's protocolStatus (section 5.5).
    public enum ProtocolStatus {
        public static let requestComplete: UInt8 = 0
        public static let cantMultiplexConnection: UInt8 = 1
        public static let overloaded: UInt8 = 2
        public static let unknownRole: UInt8 = 3
    }

    /// What FCGI_GET_VALUES may ask and what a worker answers: one connection at a time, one
    /// request per connection at a time, no multiplexing.
    public static let values: [String: String] = ["FCGI_MAX_CONNS": "1", "FCGI_MAX_REQS": "1", "FCGI_MPXS_CONNS": "0"]
}

/// A peer that does not speak FastCGI 1.0 as a web server does, or asks for more than a worker
/// takes. The connection is closed; the worker goes back to `accept`.
public enum FastCGIProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A record header whose version byte is not 1.
    case unsupportedVersion(UInt8)
    /// A record type a web server never sends, or one out of place (`PARAMS` before
    /// `BEGIN_REQUEST`, `STDIN` before the params ended, ...).
    case unexpectedRecord(type: UInt8, requestID: Int)
    /// A record whose content does not parse (a short BEGIN_REQUEST body, a name-value pair whose
    /// lengths run past the end).
    case malformed(String)
    /// More params bytes, name-value pairs or records than a request may have.
    case tooLarge(String)

    public var description: String {
        switch self {
        case let .unsupportedVersion(v): "FastCGI version \(v) (only 1 exists)"
        case let .unexpectedRecord(type, id): "unexpected record type \(type) for request \(id)"
        case let .malformed(what): "malformed \(what)"
        case let .tooLarge(what): "too large: \(what)"
        }
    }
}
