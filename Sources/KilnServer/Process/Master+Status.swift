import KilnHTTP
import CKilnProcessShims
import FoundationEssentials
import Glibc

/// `/_kiln/metrics` and `/_kiln/status` (php-fpm's `pm.status_path`), answered by the master from
/// the scoreboard and the exporter: never by a worker, so they answer while every worker is busy.
extension Master {
    /// Prometheus text format: every worker's counters added up, plus the master's own.
    func metricsResponse() -> HTTPResponse {
        var busy = 0, idle = 0
        if let scoreboard {
            for w in supervisor.workers.values { exporter.collect(scoreboard, slot: w.board) }
            for (_, slot) in currentSlots() {
                if slot.isBusy { busy += 1 } else { idle += 1 }
            }
        }
        let body = exporter.exposition(busy: busy, idle: idle, uptime: Master.now() - startedAt, board: scoreboard)
        return HTTPResponse(status: 200, headers: [
            (HeaderName.contentType, "text/plain; version=0.0.4; charset=utf-8"),
            (HeaderName.contentLength, String(body.count)),
            (HeaderName.cacheControl, "no-store"),
        ], body: body)
    }

    /// One worker on the status page.
    struct WorkerStatus: Codable {
        var pid: Int32
        var generation: Int
        /// `idle`, `busy`, or `draining` (an old generation finishing its request).
        var state: String
        var requests: UInt64
        var uri: String?
        var runningSeconds: Double?
        var stage: String?
        /// The request's `request_id` (as in the access log and `X-Request-Id`).
        var requestId: String?
    }

    struct StatusPage: Codable {
        /// The master's process id (`kiln reload` sends it SIGHUP).
        var pid: Int32
        var uptimeSeconds: Double
        var generation: Int
        var workersConfigured: Int
        var answered: UInt64
        var shed: UInt64
        var diskCacheBytes: UInt64?
        var diskCacheEntries: UInt64?
        /// Connections waiting in the main socket's listen queue (nil when the kernel does not say).
        var listenQueue: Int?
        /// How long the oldest of them has waited at least (`QueueWaitTracker`), seconds.
        var oldestQueuedSeconds: Double?
        var workers: [WorkerStatus]
        /// Reloads (SIGHUP) since start, and why the last one was refused (absent when it took).
        var reloads: Int
        var lastReloadError: String?
    }

    func statusPage() -> StatusPage {
        if let scoreboard { for w in supervisor.workers.values { exporter.collect(scoreboard, slot: w.board) } }
        let now = Scoreboard.now()
        let list = supervisor.workers.values.sorted { ($0.generation, $0.slot) < ($1.generation, $1.slot) }.map { w -> WorkerStatus in
            let slot = scoreboard?.read(w.board)
            let mine = slot?.pid == w.pid ? slot : nil
            let busy = mine?.isBusy ?? false
            let state = w.generation != supervisor.generation || w.deadline != nil ? "draining" : busy ? "busy" : "idle"
            return WorkerStatus(pid: w.pid, generation: w.generation, state: state, requests: mine?.requestsDone ?? 0,
                                uri: busy ? mine?.uri : nil,
                                runningSeconds: busy ? mine?.requestStart.map { Double(now - $0) / 1e9 } : nil,
                                stage: busy ? mine?.stageDescription : nil,
                                requestId: busy && !(mine?.traceID.isEmpty ?? true) ? mine?.traceID : nil)
        }
        let swept = (scoreboard?.global(.diskSwept) ?? 0) != 0
        let queued = socket.map { kiln_listen_queue_length($0.fd) }.flatMap { $0 >= 0 ? $0 : nil }
        var oldest: Double?
        if let queued, let scoreboard {
            oldest = supervisor.overload.oldestWait(now: Master.now(), accepted: scoreboard.global(.acceptedConnections),
                                                    queued: queued).rounded(toPlaces: 2)
        }
        return StatusPage(pid: getpid(), uptimeSeconds: (Master.now() - startedAt).rounded(toPlaces: 1), generation: supervisor.generation,
                          workersConfigured: configuration.workers, answered: exporter.answered, shed: exporter.shed,
                          diskCacheBytes: swept ? scoreboard?.global(.diskBytes) : nil,
                          diskCacheEntries: swept ? scoreboard?.global(.diskEntries) : nil,
                          listenQueue: queued, oldestQueuedSeconds: oldest, workers: list,
                          reloads: reloads, lastReloadError: lastReloadError)
    }

    func statusPageResponse(json: Bool) -> HTTPResponse {
        let page = statusPage()
        let body: [UInt8]
        let type: String
        if json {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys]
            body = Array((try? encoder.encode(page)) ?? Data("{}".utf8)) + [0x0a]
            type = "application/json"
        } else {
            body = Array(Master.statusText(page).utf8)
            type = "text/plain; charset=utf-8"
        }
        return HTTPResponse(status: 200, headers: [
            (HeaderName.contentType, type), (HeaderName.contentLength, String(body.count)), (HeaderName.cacheControl, "no-store"),
        ], body: body)
    }

    static func statusText(_ p: StatusPage) -> String {
        var lines = [
            "uptime:              \(Supervisor.format(p.uptimeSeconds)) s",
            "generation:          \(p.generation)",
            "workers:             \(p.workers.filter { $0.state != "draining" }.count) of \(p.workersConfigured)",
            "answered:            \(p.answered)",
            "shed (503):          \(p.shed)",
        ]
        if let q = p.listenQueue {
            lines.append("listen queue:        \(q) waiting" + (q > 0 ? ", the oldest for \(Supervisor.format(p.oldestQueuedSeconds ?? 0)) s or more" : ""))
        }
        if let b = p.diskCacheBytes, let e = p.diskCacheEntries {
            lines.append("disk cache:          \(e) entries, \(b) bytes (last sweep)")
        }
        lines.append("")
        lines.append("pid      gen  state     requests  running  stage / uri")
        for w in p.workers {
            let running = w.runningSeconds.map { Supervisor.format($0) + " s" } ?? "-"
            let what = w.uri.map { "\(w.stage ?? "") \($0)" + (w.requestId.map { " [\($0)]" } ?? "") } ?? ""
            lines.append("\(pad(String(w.pid), 8)) \(pad(String(w.generation), 4)) \(pad(w.state, 9)) \(pad(String(w.requests), 9)) \(pad(running, 8)) \(what)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The scoreboard slots of the running workers of the current generation.
    func currentSlots() -> [(pid: pid_t, slot: Scoreboard.Slot)] {
        guard let scoreboard else { return [] }
        return supervisor.currentWorkers.compactMap { w in
            guard let s = scoreboard.read(w.board), s.pid == w.pid else { return nil }
            return (w.pid, s)
        }
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        let f = pow(10, Double(places))
        return (self * f).rounded() / f
    }
}
