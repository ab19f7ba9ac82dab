import KilnModel

/// The adapters switched on (`adapters.*`), asked in order: the first that claims a URL
/// translates it. Empty by default: every URL is native.
public struct URLAdapters: Sendable {
    public var adapters: [any URLAdapter]
    /// Whether adapted URLs (which carry no signature) are accepted while URLs must be signed
    /// (`adapters.allow_unsigned`); they then meet the allow-lists like any unsigned URL.
    public var allowUnsigned: Bool

    public init(adapters: [any URLAdapter] = [], allowUnsigned: Bool = false) {
        self.adapters = adapters
        self.allowUnsigned = allowUnsigned
    }

    public var isEmpty: Bool { adapters.isEmpty }

    /// The translation of `request` by the first adapter that claims it, or nil (a native URL).
    /// Uses the raw request target (`REQUEST_URI`): nginx's `DOCUMENT_URI` has no query, merges
    /// the slashes of an absolute source URL and decodes what the adapters decode themselves.
    public func adapt(_ request: HTTPRequest) throws(AdapterError) -> AdaptedURL? {
        guard !adapters.isEmpty else { return nil }
        let target = request.uri.prefix { $0 != "#" }
        let path = String(target.prefix { $0 != "?" })
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
        for adapter in adapters {
            guard let adapted = try adapter.adapt(path: path, query: query) else { continue }
            // Bytes that were not UTF-8 arrive as U+FFFD, which two different URLs would share.
            guard !target.contains("\u{FFFD}") else { throw AdapterError(adapter.name, "the URL is not valid UTF-8") }
            return adapted
        }
        return nil
    }
}
