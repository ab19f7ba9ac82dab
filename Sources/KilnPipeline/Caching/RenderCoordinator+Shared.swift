import KilnModel

/// The shared result store's part of a fetch (`SharedCaching`, `cache.shared`): looked up when
/// this process is about to render (after the local caches, under the render lock when there is
/// one), written after the response.
extension RenderCoordinator {
    /// The result from the shared store, kept on disk (when rendered results go there) and in
    /// memory, as `.hitShared`; nil when there is no store or it had nothing usable. The lookup is
    /// told to `observer` (metrics).
    func lookUpShared(_ key: CacheKey, _ observer: (any RenderObserving)?) -> (CachedImage, CacheOutcome)? {
        guard let shared else { return nil }
        let named = sharedKey(key)
        let lookup = timed("store.read") { shared.lookUp(named) }
        observer?.sharedLookup(lookup)
        guard case .hit(let image) = lookup else { return nil }
        if storesFinal, let disk { timed("cache.write") { disk.store(.image(image), for: key) } }
        memory[key] = image
        return (image, .hitShared)
    }

    /// `key` as the shared store names it in the current fetch: with the source's content digest
    /// when the fetch has one (asked once per fetch).
    func sharedKey(_ key: CacheKey) -> CacheKey {
        if let known = sharedKeyOfFetch { return known }
        let named = sourceDigest?().map { key.sharing(sourceDigest: $0) } ?? key
        sharedKeyOfFetch = named
        return named
    }

    /// The shared store's result, or a render (without render locks: no disk cache, or
    /// `cache.store = original`, or the lock could not be had).
    func sharedOrRender(_ key: CacheKey, _ source: CacheKey?, _ render: () throws -> CachedImage,
                        _ observer: (any RenderObserving)?) throws(PipelineFailure) -> (CachedImage, CacheOutcome) {
        if let hit = lookUpShared(key, observer) { return hit }
        return try renderAndStore(key, source, render, observer)
    }

    /// Writes the results rendered since the last call to the shared store and tells `observer`
    /// what each write did. Call it after the response was written: it may take up to
    /// `cache.shared_write_timeout` per result.
    @discardableResult
    public func flushShared(observer: (any RenderObserving)?) -> [SharedWrite] {
        guard let shared else { return [] }
        let start = Timeline.now()
        let writes = shared.flush()
        if !writes.isEmpty { intervals.append(Timeline.Interval(name: "store.write", start: start, end: Timeline.now())) }
        for write in writes { observer?.sharedWrite(write) }
        return writes
    }
}
