import KilnModel
import KilnOrigins
import KilnServer
import Logging

// The shared store's tier (`SharedResultStore`, part B of issue 28), and the HTTP requests of the
// edge and hook tiers (`HTTPFetcher.send`).

extension PurgeTiers {
    /// Whether `cache.shared` names a store.
    var sharedStoreConfigured: Bool { configuration.shared.isEnabled }

    /// Tier 1: every object of the source in the shared store (`<prefix><SourceTag.hex>/`), nil
    /// when no store is configured.
    func purgeSharedStore(_ sourcePath: String) -> Outcome? {
        let label = "shared store \(configuration.shared.url)"
        let store: SharedResultStore?
        do throws(ConfigError) {
            store = try SharedResultStore.make(configuration.shared, origins: configuration.origins, logger: logger)
        } catch {
            return Outcome(target: label, ok: false, answer: "\(error)")
        }
        guard let store else { return nil }
        do throws(ObjectStoreError) {
            let deleted = try store.purge(sourcePath: sourcePath)
            return Outcome(target: label, ok: true, answer: "deleted \(deleted) objects of \(sourcePath)", removed: deleted)
        } catch {
            return Outcome(target: label, ok: false, answer: error.message)
        }
    }
}

/// An HTTP request with any method for the edge and hook tiers, bounded by `timeout`; the
/// targets are the operator's own (`purge.varnish`, `purge.hooks`), so any address is allowed.
enum PurgeHTTP {
    struct Failure: Error {
        var message: String
    }

    /// The status and the body as text, or why no answer came.
    static func send(_ method: String, _ url: String, headers: [(String, String)], body: [UInt8],
                     timeout: Double) -> Result<(Int, String), Failure> {
        // No redirects: a purge goes where it was configured to; answers are short.
        let fetcher = HTTPFetcher(connectTimeout: timeout, timeout: timeout, maxRedirects: 0, maxBytes: 64 << 10)
        do throws(HTTPFetcher.Failure) {
            let r = try fetcher.send(method, url, headers: headers.map { (name: $0.0, value: $0.1) }, body: body,
                                     checkAddress: { _ in nil })
            return .success((r.status, String(decoding: r.body, as: UTF8.self)))
        } catch {
            return .failure(Failure(message: describe(error)))
        }
    }

    /// One line for a failure.
    static func describe(_ failure: HTTPFetcher.Failure) -> String {
        switch failure {
        case let .unavailable(m): "libcurl unavailable: \(m)"
        case let .refused(m): "refused: \(m)"
        case let .tooLarge(m): "answer too large: \(m)"
        case let .timeout(m): "timed out: \(m)"
        case let .redirects(m): "redirected (not followed): \(m)"
        case let .transport(m): m
        case let .interrupted(_, reason, _): "answer cut: \(reason)"
        case let .notStarted(m), let .busy(m): m
        }
    }
}
