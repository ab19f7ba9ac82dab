import KilnOrigins
import KilnFastCGI
import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnPipeline
import KilnModel

/// A worker's eyes on its request: publishes where the request is in the scoreboard (so the
/// master can enforce `limits.render_timeout` and name the stage in its logs), times each stage
/// and counts the request (`WorkerMetrics`, in the worker's slot), and stops work whose web server
/// has gone: before each stage it polls the FastCGI connection for a hang-up (nginx closes it when
/// its client leaves or it stops waiting), and throws `.cancelled` when it sees one, so nothing is
/// decoded or rendered for nobody.
///
/// The pipeline calls `enter` and the other `RenderObserving` methods; the FastCGI responder calls
/// `begin`, `responding` and `end` around each request.
public final class RequestMonitor: RenderObserving {
    let scoreboard: Scoreboard?
    let slot: Int
    let metrics: WorkerMetrics?
    let pid = getpid()
    private var connectionFD: Int32 = -1
    private var requestStart: Int64 = 0
    private var stage: WorkerActivity = .idle
    private var stageStart: Int64 = 0
    private var stageTimes: [RenderStage: Int64] = [:]
    /// Requests stopped because the web server had closed the connection.
    public private(set) var abandonedCount = 0

    /// The stages `kiln_stage_duration_seconds` times.
    static let timedStages: Set<RenderStage> = [.wait, .load, .sniff, .decode, .colour, .process, .encode, .store]

    /// `scoreboard` nil (a worker started by hand): only the hang-up checks.
    public init(scoreboard: Scoreboard?, slot: Int, metrics: WorkerMetrics? = nil) {
        self.scoreboard = slot >= 0 ? scoreboard : nil
        self.slot = slot
        self.metrics = metrics
        if let scoreboard, slot >= 0 { scoreboard.reset(slot, pid: pid) }
    }

    /// A connection was taken from the listen queue (counted for the master's back-pressure).
    public func connectionAccepted() {
        scoreboard?.addGlobal(.acceptedConnections, 1)
    }

    /// A request was read from the connection on `fd`.
    public func begin(uri: String, requestID: String = "", connectionFD fd: Int32) {
        connectionFD = fd
        requestStart = Scoreboard.now()
        stage = .accept
        stageStart = requestStart
        stageTimes.removeAll(keepingCapacity: true)
        scoreboard?.begin(slot, pid: pid, uri: uri, requestID: requestID, stage: .accept)
    }

    /// The answer is about to be written.
    public func responding() {
        switchStage(to: .respond)
        scoreboard?.enter(slot, stage: .respond, detail: "")
    }

    /// The request is over: `status` and `bodyBytes` as written, `cache` its `X-Cache`;
    /// `counted` false for an answer another worker gives (a lookup lane's hand-off).
    public func end(status: Int, bodyBytes: Int, cache: CacheOutcome?, counted: Bool = true) {
        connectionFD = -1
        switchStage(to: .idle)
        if counted {
            metrics?.requestFinished(status: status, bodyBytes: bodyBytes, cache: cache,
                                     nanoseconds: Scoreboard.now() - requestStart, stages: stageTimes)
        }
        scoreboard?.end(slot)
    }

    public func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure) {
        switchStage(to: WorkerActivity(stage))
        scoreboard?.enter(slot, stage: WorkerActivity(stage), detail: detail)
        if connectionFD >= 0 && kiln_peer_closed(connectionFD) != 0 {
            abandonedCount += 1
            throw PipelineFailure(.cancelled, "the web server closed the connection before \(stage.name): work stopped")
        }
    }

    public func sourceRead(format: ImageFormat, bytes: Int) {
        metrics?.sourceRead(format, bytes: bytes)
    }

    public func resultEncoded(format: ImageFormat, bytes: Int) {
        metrics?.resultEncoded(format)
    }

    public func originFetched(_ fetch: OriginFetch) {
        metrics?.originFetched(fetch)
    }

    public func sharedLookup(_ lookup: SharedLookup) {
        metrics?.sharedLookup(lookup)
    }

    public func sharedWrite(_ write: SharedWrite) {
        metrics?.sharedWrite(write)
    }

    /// Only a real wait counts as the `wait` stage; taking a free lock is part of the lookup.
    public func lockTaken(waited: Bool) {
        if waited {
            // The deadline is for rendering: the wait (bounded by the holder's own deadline, or
            // cache.lock_timeout) does not count.
            if stage == .wait { scoreboard?.shiftStart(slot, by: Scoreboard.now() - stageStart) }
            switchStage(to: .cache)
        } else {
            stage = .cache
            stageStart = Scoreboard.now()
        }
    }

    public func swept(_ stats: SweepStats) {
        metrics?.evicted(stats.removedEntries)
        scoreboard?.setGlobal(.diskBytes, UInt64(max(0, stats.bytes + stats.tempBytes)))
        scoreboard?.setGlobal(.diskEntries, UInt64(max(0, stats.entries)))
        scoreboard?.setGlobal(.diskSwept, 1)
    }

    /// Adds the time since the last switch to the stage that ends (several processors add up).
    private func switchStage(to next: WorkerActivity) {
        let now = Scoreboard.now()
        if let timed = stage.stage, RequestMonitor.timedStages.contains(timed) { stageTimes[timed, default: 0] += now - stageStart }
        stage = next
        stageStart = now
    }
}
