import KilnHTTP
import Glibc
import KilnModel
import KilnPOSIX
import Logging
import Synchronization

/// Renders a list of URL paths into the disk cache with a few threads, each with its own image
/// handler (pipeline, memory cache, disk cache instance): pipelines are single-threaded, and
/// separate `DiskCache` instances take their render locks on separate open files, so threads
/// coordinate with each other exactly as worker processes do — and with running workers too.
///
/// Each path goes through `ImageHandler.handle` as a `GET` without headers (so `f:auto` warms the
/// variant for clients that do not accept WebP): the same URL grammar, keys and caches as the
/// server. `X-Cache: MISS` means rendered here; any other value means it was on disk already
/// (or another process rendered it while this one waited).
public final class Warmer: Sendable {
    public enum Outcome: Sendable, Equatable {
        case rendered
        case skipped
        case failed(String)
    }

    public struct Tally: Sendable {
        public var rendered = 0
        public var skipped = 0
        public var failed = 0
        /// The first failures in the order of the list: path and a one-line reason.
        public var failures: [(path: String, reason: String)] = []
        public var done: Int { rendered + skipped + failed }
    }

    let paths: [String]
    /// Makes one handler per thread (`HandlerFactory.makeImageHandler`).
    let makeHandler: @Sendable () throws -> ImageHandler
    let logger: Logger
    /// Called (under the lock) after every path, with the tally so far.
    let onProgress: @Sendable (Tally) -> Void
    static let failuresKept = 5

    /// What the threads share: the next path to take and the tally so far.
    private struct Progress {
        var next = 0
        var tally = Tally()
        var failureIndex: [Int] = []
    }
    private let progress = Mutex(Progress())

    public init(paths: [String], logger: Logger, makeHandler: @escaping @Sendable () throws -> ImageHandler,
                onProgress: @escaping @Sendable (Tally) -> Void) {
        self.paths = paths
        self.makeHandler = makeHandler
        self.logger = logger
        self.onProgress = onProgress
    }

    /// Runs `jobs` threads until every path is done; returns the tally.
    public func run(jobs: Int) -> Tally {
        var threads: [pthread_t] = []
        for _ in 0..<max(1, min(jobs, paths.count)) {
            if let thread = KilnThread.spawn({ [self] in self.work() }) { threads.append(thread) }
        }
        if threads.isEmpty { work() }   // no thread could be started: do it here
        for t in threads { pthread_join(t, nil) }
        return progress.withLock { $0.tally }
    }

    /// One thread: its own handler, then paths from the shared list until none are left.
    private func work() {
        let handler: ImageHandler
        do {
            handler = try makeHandler()
        } catch {
            logger.error("kiln warm: cannot build the pipeline: \(error)")
            while let i = take() { record(i, .failed("pipeline unavailable: \(error)")) }
            return
        }
        while let i = take() {
            record(i, Warmer.warm(paths[i], with: handler))
        }
        handler.finish()
    }

    public static func warm(_ path: String, with handler: ImageHandler) -> Outcome {
        let response = handler.handle(HTTPRequest(method: "GET", uri: path, isTrusted: true))  // the operator's list: unsigned paths
        handler.afterResponse()
        guard response.status == 200 else {
            let text = String(decoding: response.body, as: UTF8.self)
            let firstLine = text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
            return .failed("HTTP \(response.status)" + (firstLine.isEmpty ? "" : ": \(firstLine)"))
        }
        return response.cacheOutcome == .miss ? .rendered : .skipped
    }

    private func take() -> Int? {
        progress.withLock { p in
            guard p.next < paths.count else { return nil }
            p.next += 1
            return p.next - 1
        }
    }

    private func record(_ index: Int, _ outcome: Outcome) {
        progress.withLock { p in
            switch outcome {
            case .rendered: p.tally.rendered += 1
            case .skipped: p.tally.skipped += 1
            case .failed(let reason):
                p.tally.failed += 1
                // Keep the first failures by list order, whichever thread finished first.
                p.failureIndex.append(index)
                p.tally.failures.append((paths[index], reason))
                let order = zip(p.failureIndex, p.tally.failures).sorted { $0.0 < $1.0 }.prefix(Warmer.failuresKept)
                p.failureIndex = order.map(\.0)
                p.tally.failures = order.map(\.1)
            }
            onProgress(p.tally)
        }
    }
}
