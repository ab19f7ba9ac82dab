import Foundation
import KilnModel
import KilnPipeline

/// The double of `RenderObserving`: records every stage a request enters (with its detail) and
/// every report (source reads, encodes, sweeps, lock takes), and lets a test act at a stage:
/// `onEnter` runs on the request's thread before the stage and may throw (a client that went
/// away: `PipelineFailure(.cancelled, ...)`); `cancelling(at:)` makes such an observer. Another
/// thread can wait for a stage with `waitUntilEntered` instead of sleeping. Thread-safe.
public final class RecordingObserver: RenderObserving, @unchecked Sendable {
    public typealias Hook = @Sendable (RenderStage, String) throws(PipelineFailure) -> Void

    /// A stage entered, and its detail (the processor, "took over" after a lock wait, or empty).
    public struct Entry: Sendable, Equatable {
        public var stage: RenderStage
        public var detail: String

        public init(_ stage: RenderStage, _ detail: String = "") {
            self.stage = stage
            self.detail = detail
        }
    }

    private let condition = NSCondition()
    private let onEnter: Hook?
    private var entered: [Entry] = []
    private var sourceReadsSeen: [(format: ImageFormat, bytes: Int)] = []
    private var encodedSeen: [(format: ImageFormat, bytes: Int)] = []
    private var sweepsSeen: [SweepStats] = []
    private var locksSeen: [Bool] = []

    public init(onEnter: Hook? = nil) {
        self.onEnter = onEnter
    }

    /// An observer whose request is cancelled when it enters `stage` (its client went away).
    public static func cancelling(at stage: RenderStage) -> RecordingObserver {
        RecordingObserver { entered, _ throws(PipelineFailure) in
            if entered == stage { throw PipelineFailure(.cancelled, "client went away") }
        }
    }

    /// The stages entered, in order.
    public var entries: [Entry] { condition.withLock { entered } }
    /// The stages entered, in order, without details.
    public var stages: [RenderStage] { entries.map(\.stage) }
    /// `sourceRead` reports: format and bytes.
    public var sourceReads: [(format: ImageFormat, bytes: Int)] { condition.withLock { sourceReadsSeen } }
    /// `resultEncoded` reports: format and bytes.
    public var encodes: [(format: ImageFormat, bytes: Int)] { condition.withLock { encodedSeen } }
    /// `swept` reports.
    public var sweeps: [SweepStats] { condition.withLock { sweepsSeen } }
    /// `lockTaken` reports: whether another process held the lock first.
    public var locksTaken: [Bool] { condition.withLock { locksSeen } }

    /// Whether a request entered `stage` with `detail` (empty: the plain stage) within `timeout`
    /// seconds; returns at once when it already did.
    public func waitUntilEntered(_ stage: RenderStage, detail: String = "", timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !entered.contains(Entry(stage, detail)) {
            if !condition.wait(until: deadline) { return entered.contains(Entry(stage, detail)) }
        }
        return true
    }

    public func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure) {
        condition.withLock {
            entered.append(Entry(stage, detail))
            condition.broadcast()
        }
        try onEnter?(stage, detail)
    }

    public func sourceRead(format: ImageFormat, bytes: Int) {
        condition.withLock { sourceReadsSeen.append((format: format, bytes: bytes)) }
    }

    public func resultEncoded(format: ImageFormat, bytes: Int) {
        condition.withLock { encodedSeen.append((format: format, bytes: bytes)) }
    }

    public func swept(_ stats: SweepStats) {
        condition.withLock { sweepsSeen.append(stats) }
    }

    public func lockTaken(waited: Bool) {
        condition.withLock { locksSeen.append(waited) }
    }
}
