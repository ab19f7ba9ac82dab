import KilnOrigins
import KilnServer
import Logging

// The two tiers whose code lands from other parts of issue 28: the shared store (part B's
// `SharedResultStore`) and HTTP requests with any method (the lead's `HTTPFetcher.send`).

extension PurgeTiers {
    /// Whether `cache.shared` names a store.
    // B: true when `cache.shared` is set (SharedStoreConfiguration), once B's settings are on main.
    var sharedStoreConfigured: Bool { false }

    /// Tier 1: every object of the source in the shared store, nil when no store is configured.
    // B: `SharedResultStore.make(<cache.shared settings>, origins: configuration.origins, logger: logger)`
    //    then `try store.purge(sourcePath:)` (count of objects deleted; `ObjectStoreError.message`
    //    on failure). Label: "shared store <cache.shared>". The lead wires it when B lands.
    func purgeSharedStore(_ sourcePath: String) -> Outcome? {
        nil
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
        .failure(Failure(message: "HTTP purges need HTTPFetcher.send (not built yet)"))
    }
}
