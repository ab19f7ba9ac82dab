/// The render deadline as the pipeline's steps see it: the master kills a worker whose request
/// runs past `limits.render_timeout` (counted from `requestBegan`, plus the time spent waiting for
/// render locks), so a step that can stop early with a good answer asks how long is left before
/// starting more work (the `max_bytes` search, `ByteBudget`).
extension RenderCoordinator {
    /// Milliseconds from now to the render deadline; nil without one (no `limits.render_timeout`,
    /// or outside a request).
    public func millisecondsLeft() -> Int64? {
        guard renderTimeout > 0, requestStarted > 0 else { return nil }
        return requestStarted + Int64(renderTimeout * 1000) - now()
    }

    /// Whether work expected to take `milliseconds` still fits before the deadline, with the
    /// time the answer needs after it (writing the caches and the response): a quarter of the
    /// expected time, and at least `RenderCoordinator.deadlineSlack`. Without a deadline, true.
    public func fitsBeforeDeadline(milliseconds: Double) -> Bool {
        guard let left = millisecondsLeft() else { return true }
        let reserve = max(Double(RenderCoordinator.deadlineSlack), milliseconds / 4)
        return Double(left) >= milliseconds + reserve
    }
}
