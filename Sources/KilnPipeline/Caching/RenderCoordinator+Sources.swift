import KilnModel

/// Per-source memory of failures (`SourceFault`, `CacheKey.sourceFailures`) and the decode marker
/// that lets a decode killed at the render deadline be remembered too.
///
/// A decode cannot report its own death: the master kills the worker with SIGKILL at
/// `limits.render_timeout`. So before decoding, the worker takes the source's marker, a named lock
/// of the disk cache (`locks/ab/<source key>.lock`, `flock`), and writes into it the wall-clock time
/// its request's deadline falls at. A decode that ends, well or badly, removes the marker
/// (`RenderLock.release`); a killed worker's marker stays, unlocked (the kernel dropped the
/// `flock`). The next request for any variant of that source version takes the marker: one left
/// with a deadline that had passed (to within `deadlineSlack`) means its decoder was killed at
/// the deadline, and the source is remembered as a failure (`tooLarge`, a 413 naming the
/// deadline) for `cache.negative_ttl` without decoding again. A marker left before its deadline
/// (a crash) is taken over and the source decoded once more. A marker held by a live decode is
/// not waited for: the two decodes run side by side.
extension RenderCoordinator {
    /// A marker counts as killed at the deadline when its holder died at most this long before
    /// the deadline it announced (the master's kill follows the worker's published start, which
    /// comes a little before `requestBegan`).
    static let deadlineSlack: Int64 = 1_000

    /// The public reason of a source whose decode ran into the render deadline.
    static func deadlineFailure(_ renderTimeout: Double) -> PipelineFailure {
        let seconds = renderTimeout == renderTimeout.rounded() ? "\(Int(renderTimeout))" : "\(renderTimeout)"
        return PipelineFailure(.tooLarge, "decoding this image did not finish within limits.render_timeout (\(seconds) s)")
    }

    /// A request begins: the base of the deadline announced in decode markers; sources purged
    /// since the last request leave the memory (`dropPurgedSources`).
    public func requestBegan() {
        requestStarted = now()
        dropPurgedSources()
    }

    /// The remembered failure of the source `source` (disk cache), thrown as seen from `outcome`.
    func lookUpSourceFailure(_ source: CacheKey, in disk: any DataCaching, outcome: CacheOutcome) throws(PipelineFailure) {
        guard case let .failure(failure, expires)? = disk.entry(for: source) else { return }
        remember(source, failure, expires: expires)
        throw failure.with(outcome: outcome)
    }

    /// Runs `decode` (the decoder's work on the source `source`) under the source's decode marker.
    /// Throws `SourceFault` with the deadline failure, without running `decode`, when the last
    /// decoder of this source version was killed at the render deadline. Without a disk cache, a
    /// render deadline or a negative TTL, runs `decode` as is.
    public func decoding<T>(_ source: CacheKey, _ decode: () throws -> T) throws -> T {
        try decoding(source) { _ in try decode() }
    }

    /// `decoding(_:_:)` for a decode that hands each step to its caller (the frames of an
    /// animation): the caller's own work runs in `DecodeMarking.outsideDecode`, where a kill is not
    /// taken for the source's.
    public func decoding<T>(_ source: CacheKey, _ decode: (DecodeMarking) throws -> T) throws -> T {
        guard renderTimeout > 0, negativeTTL > 0, let markers,
              let marker = markers.tryLock(named: source.hex) else { return try decode(DecodeMarking(lock: nil, until: 0)) }
        defer { marker.release() }
        if let left = marker.announcedDeadline, left - RenderCoordinator.deadlineSlack <= now() {
            logger.warning("the last decode of \(source.sourcePath) was killed at limits.render_timeout; not decoding it again for \(negativeTTL) s")
            throw SourceFault(RenderCoordinator.deadlineFailure(renderTimeout))
        }
        let started = requestStarted > 0 ? requestStarted : now()
        let until = started + Int64(renderTimeout * 1000)
        marker.announce(until: until)
        return try decode(DecodeMarking(lock: marker, until: until))
    }
}

/// A held decode marker (`RenderCoordinator.decoding`), or none.
public struct DecodeMarking {
    let lock: RenderLock?
    let until: Int64

    /// Runs `body`, work of the request rather than of the decoder (processing a decoded frame),
    /// with the marker's deadline withdrawn: a worker killed in there leaves a marker that says
    /// nothing, and the source is not remembered as a failure.
    public func outsideDecode<T>(_ body: () throws -> T) rethrows -> T {
        guard let lock else { return try body() }
        lock.withdrawAnnouncement()
        defer { lock.announce(until: until) }
        return try body()
    }
}
