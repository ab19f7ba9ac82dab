import KilnModel

/// The lookup lane (issue 37): `server.lookup_workers` extra worker processes that listen on a
/// socket of their own (`server.lookup_listen`) and answer every request they can from the
/// memory and disk caches, handing each miss to the render workers through nginx
/// (`X-Accel-Redirect` to the internal locations of `nginx/kiln-lookup.conf`, `RenderHandOff`).
/// nginx sends image requests to the lane first; a hit then never queues behind renders. Off by
/// default (0): nginx and the render workers work as before.
extension ServerConfiguration.Key {
    public static let lookupWorkers = Setting.count(
        "server.lookup_workers", default: 0, in: 0...64,
        doc: "lookup lane workers: they answer cache hits on `lookup_listen` and hand misses to the render workers through nginx (nginx/kiln-lookup.conf); 0: none")
    public static let lookupListen = Setting.text(
        "server.lookup_listen", default: "auto", expected: "auto, `unix:/path/kiln-lookup.sock` or `127.0.0.1:9002`",
        doc: "where the lookup lane listens: `auto` is beside `listen` (`kiln.sock` → `kiln-lookup.sock`, port + 2)",
        check: { $0 == "auto" || (try? ListenAddress(parsing: $0)) != nil })
}

extension ServerConfiguration {
    /// The lane's address; nil without lookup workers (or when `auto` cannot derive one).
    public var lookupAddress: ListenAddress? {
        guard lookupWorkers > 0 else { return nil }
        guard lookupListen == "auto" else { return try? ListenAddress(parsing: lookupListen) }
        return listen.beside(suffix: "-lookup", portOffset: 2)
    }

    /// Worker slots: the render workers first (`0..<workers`), then the lane's.
    public var slots: Int { workers + lookupWorkers }

    /// Whether `slot` is one of the lane's.
    public func isLookupSlot(_ slot: Int) -> Bool { slot >= workers }
}
