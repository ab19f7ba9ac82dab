import KilnHTTP
import Logging
import Synchronization

/// The request a worker is answering, for its log lines: while a request runs, every log line of
/// the process (the handler's, the pipeline's, the caches', the monitor's) carries its
/// `request_id` through the swift-log metadata provider that `LogLineHandler.bootstrap` installs.
/// A worker answers one request at a time, so one process-wide value is enough.
public enum RequestContext {
    private static let current = Mutex<String?>(nil)

    /// The id of the request in progress, nil between requests.
    public static var requestID: String? {
        current.withLock { $0 }
    }

    /// Runs `body` with `id` as the current request id.
    public static func with<T>(requestID id: String, _ body: () throws -> T) rethrows -> T {
        current.withLock { $0 = id }
        defer { current.withLock { $0 = nil } }
        return try body()
    }

    /// `request_id` while a request runs.
    public static let metadataProvider = Logger.MetadataProvider {
        guard let id = requestID else { return [:] }
        return ["request_id": .string(id)]
    }
}
