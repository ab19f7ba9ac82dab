import KilnFastCGI
import KilnHTTP
import Foundation
import Glibc

/// The real `kiln` binary of this build, started as a child of the test, with its stderr in a file.
final class ServerProcess {
    let process = Process()
    let folder: String
    let logPath: String

    /// `kiln` next to the test bundle (`.build/debug/kiln`), else under the package's `.build`.
    static let binary: String? = {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("kiln").path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/kiln").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    init(_ arguments: [String], folder: String, environment: [String: String] = [:]) throws {
        guard let binary = ServerProcess.binary else { throw FastCGITestClient.Failure(description: "kiln binary not built") }
        self.folder = folder
        logPath = folder + "/kiln.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: binary)
        // The process-layer tests time their requests with the echo handler (`?sleep=ms`).
        process.arguments = arguments.first == "serve" ? arguments + ["--set", "debug.echo_handler=true"] : arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("KILN_") }
        env.merge(environment) { $1 }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: logPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
    }

    var pid: pid_t { process.processIdentifier }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The master's children (its workers), from /proc.
    func children() -> Set<pid_t> {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return Set(text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
    }

    func signal(_ sig: Int32) {
        kill(pid, sig)
    }

    /// Waits for the master to exit; nil on timeout.
    func waitForExit(timeout: Double) -> Int32? {
        guard ServerProcess.wait(timeout: timeout, { !self.process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    /// Kills whatever is left (a failed test must not leave processes behind).
    func cleanUp() {
        if process.isRunning {
            for child in children() { kill(child, SIGKILL) }
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` seconds pass.
    @discardableResult
    static func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    static func isAlive(_ pid: pid_t) -> Bool {
        // A reaped process is gone; a zombie would still show in /proc but has no children file.
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return !stat.contains(") Z ")
    }
}
