/// The parts of an HTTP request Kiln uses, built from FastCGI params (or by tests).
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `HEAD`, ...
    public var method: String
    /// The raw request target as the client sent it (FastCGI `REQUEST_URI`): still
    /// percent-encoded, query string included.
    public var uri: String
    /// Header names in lower case (`accept`, `if-none-match`, `if-modified-since`, ...).
    public var headers: [String: String]
    public var remoteAddress: String

    public init(method: String, uri: String, headers: [String: String] = [:], remoteAddress: String = "") {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.remoteAddress = remoteAddress
    }

    /// Builds a request from FastCGI params: `REQUEST_METHOD`, `REQUEST_URI`, `REMOTE_ADDR`, and
    /// every `HTTP_*` param as a header (`HTTP_IF_NONE_MATCH` becomes `if-none-match`).
    public init(fastCGIParams params: [String: String]) {
        var headers: [String: String] = [:]
        for (k, v) in params where k.hasPrefix("HTTP_") {
            headers[k.dropFirst(5).lowercased().replacingOccurrences(of: "_", with: "-")] = v
        }
        self.init(method: params["REQUEST_METHOD"] ?? "GET",
                  uri: params["REQUEST_URI"] ?? params["DOCUMENT_URI"] ?? "/",
                  headers: headers,
                  remoteAddress: params["REMOTE_ADDR"] ?? "")
    }
}

extension String {
    func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard target.count == 1, replacement.count == 1 else { return self }
        return replacingOccurrences(of: target.first!, with: replacement.first!)
    }
}
