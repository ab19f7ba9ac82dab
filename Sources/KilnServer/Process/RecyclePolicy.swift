/// When a worker leaves to be replaced by a fresh one (recycling, php-fpm's `pm.max_requests`):
/// after `server.max_requests` requests (the responder counts them), or after a request that left
/// its resident memory above `limits.max_worker_memory`. Either way it exits with status 0 after
/// answering, and the master replaces it at once, counted as a recycle, never as a crash.
struct RecyclePolicy: Equatable {
    /// `server.max_requests`; 0: unlimited.
    var maxRequests: Int
    /// `limits.max_worker_memory` in bytes; 0: no limit.
    var maxMemory: Int

    /// Whether to read the resident memory now: between requests, once at least one was answered
    /// (the request that grew the worker has been answered), and only with a limit.
    func checksMemory(afterRequests requests: Int) -> Bool {
        maxMemory > 0 && requests > 0
    }

    func isOverMemory(residentBytes: Int) -> Bool {
        maxMemory > 0 && residentBytes > maxMemory
    }

    /// The worker's notice when it leaves for its memory. Rounded up: 48.3 MiB over a 48 MiB limit
    /// reads 49, not "48 MiB is above 48 MiB".
    func memoryNotice(residentBytes rss: Int, requests: Int) -> String {
        "resident memory \((rss + (1 << 20) - 1) >> 20) MiB is above limits.max_worker_memory (\(maxMemory >> 20) MiB) after \(requests) requests; exiting to be replaced"
    }

    /// The worker's line when it leaves after `maxRequests`.
    var countNotice: String {
        "served max_requests = \(maxRequests); exiting to be replaced"
    }
}
