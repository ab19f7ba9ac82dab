import CKilnProcessShims
import Glibc
import KilnPOSIX

/// Starting worker processes (`posix_spawn`, never `fork`), and the master's files: the pid file,
/// and what is closed when it stops.
extension Master {
    /// The executable `name` in the folder of this process's own executable (the real path of
    /// `/proc/self/exe`): how `kiln serve` finds `kiln-worker`. Throws when it is missing or not
    /// executable: `kiln` and `kiln-worker` are installed together.
    public static func workerExecutable(named name: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw ServerStartError("readlink /proc/self/exe: \(Errno.text(Errno.current))") }
        let me = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folder = me.lastIndex(of: "/").map { String(me[..<$0]) } ?? "."
        let path = (folder.isEmpty ? "" : folder) + "/" + name
        guard access(path, X_OK) == 0 else {
            throw ServerStartError("the worker executable \(path) is missing or not executable (\(Errno.text(Errno.current))): "
                + "install \(name) next to \(me) (both are built by `swift build -c release`)")
        }
        return path
    }

    /// Carries out a `.spawn`: resets the scoreboard slot, starts the worker, tells the supervisor.
    func spawn(_ request: SpawnRequest) {
        scoreboard?.reset(request.board, pid: 0)
        exporter.forget(slot: request.board)
        do {
            let pid = try spawnWorker(board: request.board, slot: request.slot)
            feed(.spawned(request, pid: pid))
        } catch {
            feed(.spawnFailed(request, reason: "\(error)"))
        }
    }

    /// posix_spawn with the listening socket on fd 0 (the lookup lane's for its slots, which also
    /// get `--lookup 1`), the settings on fd 3, the scoreboard on fd 4, the shared state on fd 5,
    /// an empty signal mask and default actions.
    func spawnWorker(board: Int, slot: Int) throws -> pid_t {
        let lookup = configuration.isLookupSlot(slot)
        guard let socket = lookup ? lookupSocket : socket else { throw ServerStartError("no listening socket") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var rc = posix_spawn_file_actions_adddup2(&actions, socket.fd, 0)
        if rc == 0 { rc = posix_spawn_file_actions_adddup2(&actions, settingsFD, SettingsSnapshot.workerFD) }
        if rc == 0, let scoreboard { rc = posix_spawn_file_actions_adddup2(&actions, scoreboard.fd, Scoreboard.workerFD) }
        if rc == 0, let sharedState {
            rc = posix_spawn_file_actions_adddup2(&actions, sharedState.fd, Master.sharedStateWorkerFD)
        }
        // Nothing else the master inherited (a supervisor's pipes, say) leaks into workers.
        if rc == 0 { rc = kiln_spawn_closefrom(&actions, sharedState == nil ? Scoreboard.workerFD + 1 : Master.sharedStateWorkerFD + 1) }
        guard rc == 0 else { throw ServerStartError("posix_spawn_file_actions_adddup2: \(Errno.text(rc))") }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = workerArguments + (scoreboard == nil ? [] : ["--scoreboard-slot", String(board)]) + (lookup ? ["--lookup", "1"] : [])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        var envp: [UnsafeMutablePointer<CChar>?] = Self.workerEnvironment().map { strdup($0) }
        envp.append(nil)
        defer { for p in envp { free(p) } }
        var pid: pid_t = 0
        rc = posix_spawn(&pid, executablePath, &actions, &attr, argv, envp)
        guard rc == 0 else { throw ServerStartError("posix_spawn \(executablePath): \(Errno.text(rc))") }
        return pid
    }

    /// The master's environment, plus `RAYON_NUM_THREADS=1` unless it is set: librsvg draws some
    /// filters on a Rayon thread pool as wide as the machine, and a worker renders on one core
    /// (the scoreboard, the cost planner and `server.workers` all count a render as one).
    static func workerEnvironment() -> [String] {
        var entries: [String] = []
        var index = 0
        guard let environ = kiln_environ() else { return ["RAYON_NUM_THREADS=1"] }
        while let entry = environ[index] {
            entries.append(String(cString: entry))
            index += 1
        }
        if !entries.contains(where: { $0.hasPrefix("RAYON_NUM_THREADS=") }) { entries.append("RAYON_NUM_THREADS=1") }
        return entries
    }

    /// Writes the pid beside `path` and renames it over `path`. A symlink at `path` is refused
    /// (like nginx and php-fpm): a pid file written as root must never go where a link points.
    func writePidFile(_ path: String) throws {
        guard !path.isEmpty else { return }
        guard !Files.isSymbolicLink(path) else {
            throw ServerStartError("server.pid_file \(path) is a symbolic link: refusing to write through it")
        }
        do {
            try Files.writeAtomically(Array("\(getpid())\n".utf8), to: path)
        } catch {
            throw ServerStartError("cannot write server.pid_file \(path): \(Errno.text(error.code))")
        }
        writtenPidFile = path
    }

    func removePidFile() {
        if let path = writtenPidFile { unlink(path) }
        writtenPidFile = nil
    }

    func finish() {
        socket?.close()
        socket = nil
        statusSocket?.close()
        statusSocket = nil
        lookupSocket?.close()
        lookupSocket = nil
        if settingsFD >= 0 { close(settingsFD) }
        settingsFD = -1
        removePidFile()
    }
}
