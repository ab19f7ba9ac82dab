import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnPipeline
import KilnPOSIX

/// The shared-memory table where each worker publishes what it is doing (php-fpm's scoreboard):
/// the master creates it (a memfd, on fd 4 of every worker), each worker writes only its own slot,
/// the master reads them all to enforce `limits.render_timeout`, write the slow log, see whether
/// every worker is busy, and answer the status page. See `kiln_scoreboard.h` for the layout and
/// the sequence counter that keeps a reader's copy consistent.
public final class Scoreboard {
    /// The worker's fd of the scoreboard.
    public static let workerFD: Int32 = 4
    /// Slots: every worker of the current and of draining generations needs one.
    public static let defaultSlots = 1024

    /// One slot, copied.
    public struct Slot: Sendable, Equatable {
        public var pid: pid_t
        public var stage: WorkerActivity
        /// Monotonic nanoseconds when the request began; nil between requests.
        public var requestStart: Int64?
        public var stageStart: Int64
        public var idleSince: Int64
        public var requestID: UInt64
        public var requestsDone: UInt64
        public var uri: String
        public var detail: String
        /// The request's id in the logs (`request_id`, `X-Request-Id`); empty between requests.
        public var traceID: String = ""

        public var isBusy: Bool { requestStart != nil }

        /// `decode` or `process (bl:50)`.
        public var stageDescription: String {
            detail.isEmpty ? stage.name : "\(stage.name) (\(detail))"
        }
    }

    private let board: UnsafeMutableRawPointer
    /// The memfd (the master's; a worker's is `workerFD`).
    public let fd: Int32
    public let slots: Int

    private init(board: UnsafeMutableRawPointer, fd: Int32, slots: Int) {
        self.board = board
        self.fd = fd
        self.slots = slots
    }

    /// The master's new scoreboard.
    public static func create(slots: Int = defaultSlots) throws -> Scoreboard {
        var fd: Int32 = -1
        guard let p = kiln_sb_create(Int32(slots), &fd) else {
            throw ServerStartError("cannot create the scoreboard: \(Errno.text(Errno.current))")
        }
        return Scoreboard(board: p, fd: fd, slots: slots)
    }

    /// A worker's view of the scoreboard on `fd`, nil when there is none (a worker started by hand).
    public static func attach(fd: Int32 = workerFD) -> Scoreboard? {
        var slots: Int32 = 0
        guard let p = kiln_sb_map(fd, &slots) else { return nil }
        return Scoreboard(board: p, fd: fd, slots: Int(slots))
    }

    /// Nanoseconds on the clock every slot uses (CLOCK_MONOTONIC).
    public static func now() -> Int64 { kiln_sb_now() }

    public func reset(_ slot: Int, pid: pid_t) { kiln_sb_reset(board, Int32(slot), pid) }

    public func begin(_ slot: Int, pid: pid_t, uri: String, requestID: String = "", stage: WorkerActivity) {
        var uri = uri, trace = requestID
        uri.withUTF8 { u in
            trace.withUTF8 { t in
                kiln_sb_begin(board, Int32(slot), pid, u.baseAddress, u.count, t.baseAddress, t.count, stage.rawValue)
            }
        }
    }

    public func enter(_ slot: Int, stage: WorkerActivity, detail: String) {
        var detail = detail
        detail.withUTF8 { kiln_sb_stage(board, Int32(slot), stage.rawValue, $0.baseAddress, $0.count) }
    }

    public func end(_ slot: Int) { kiln_sb_end(board, Int32(slot)) }

    /// Moves the request's start later by `nanoseconds`: a wait for another process's render does
    /// not count against `limits.render_timeout`.
    public func shiftStart(_ slot: Int, by nanoseconds: Int64) { kiln_sb_shift_start(board, Int32(slot), nanoseconds) }

    /// Counters of `slot` (the worker's metrics; `MetricCatalog` says which cell is what).
    public func add(_ slot: Int, cell: Int, _ amount: UInt64) { kiln_sb_add(board, Int32(slot), Int32(cell), amount) }
    public func cell(_ slot: Int, _ cell: Int) -> UInt64 { kiln_sb_cell(board, Int32(slot), Int32(cell)) }
    public static let cellsPerSlot = Int(KILN_SB_CELLS)

    /// Board-wide values any process may set (the disk cache's size after a sweep).
    public func setGlobal(_ index: MetricCatalog.Global, _ value: UInt64) { kiln_sb_global_set(board, index.rawValue, value) }
    public func global(_ index: MetricCatalog.Global) -> UInt64 { kiln_sb_global(board, index.rawValue) }
    public func addGlobal(_ index: MetricCatalog.Global, _ amount: UInt64) { kiln_sb_global_add(board, index.rawValue, amount) }

    /// A consistent copy of `slot`, nil when out of range.
    public func read(_ slot: Int) -> Slot? {
        var view = kiln_sb_view()
        guard kiln_sb_read(board, Int32(slot), &view) == 0 else { return nil }
        let uri = withUnsafeBytes(of: view.uri) { Scoreboard.text($0) }
        let detail = withUnsafeBytes(of: view.detail) { Scoreboard.text($0) }
        let trace = withUnsafeBytes(of: view.trace) { Scoreboard.text($0) }
        return Slot(pid: view.pid, stage: WorkerActivity(rawValue: view.stage) ?? .idle,
                    requestStart: view.request_start_ns == 0 ? nil : view.request_start_ns,
                    stageStart: view.stage_start_ns, idleSince: view.idle_since_ns,
                    requestID: view.request_id, requestsDone: view.requests_done, uri: uri, detail: detail,
                    traceID: trace)
    }

    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
