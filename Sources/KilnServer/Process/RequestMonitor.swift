import CKilnShims
import Glibc
import Kiln

/// A worker's eyes on its request: publishes where the request is in the scoreboard (so the
/// master can enforce `limits.render_timeout` and name the stage in its logs), and stops work whose
/// web server has gone: before each stage it polls the FastCGI connection for a hang-up (nginx
/// closes it when its client leaves or it stops waiting), and throws `.abandoned` when it sees one,
/// so nothing is decoded or rendered for nobody.
///
/// The pipeline calls `enter` (`RenderObserving`); the FastCGI responder calls `begin` and `end`
/// around each request.
public final class RequestMonitor: RenderObserving {
    let scoreboard: Scoreboard?
    let slot: Int
    let pid = getpid()
    private var connectionFD: Int32 = -1
    /// Requests stopped because the web server had closed the connection.
    public private(set) var abandonedCount = 0

    /// `scoreboard` nil (a worker started by hand): only the hang-up checks.
    public init(scoreboard: Scoreboard?, slot: Int) {
        self.scoreboard = scoreboard
        self.slot = slot
        if let scoreboard, slot >= 0 { scoreboard.reset(slot, pid: pid) }
    }

    /// A request was read from the connection on `fd`.
    public func begin(uri: String, connectionFD fd: Int32) {
        connectionFD = fd
        if slot >= 0 { scoreboard?.begin(slot, pid: pid, uri: uri, stage: .accept) }
    }

    /// The answer is about to be written.
    public func responding() {
        if slot >= 0 { scoreboard?.enter(slot, stage: .respond, detail: "") }
    }

    /// The request is over.
    public func end() {
        connectionFD = -1
        if slot >= 0 { scoreboard?.end(slot) }
    }

    public func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure) {
        if slot >= 0 { scoreboard?.enter(slot, stage: stage, detail: detail) }
        if connectionFD >= 0 && kiln_peer_closed(connectionFD) != 0 {
            abandonedCount += 1
            throw PipelineFailure(.abandoned, "the web server closed the connection before \(stage.name): work stopped")
        }
    }
}
