import Foundation
import Logging
import KilnModel
import KilnPipeline

/// Shared helpers of the Caching*Tests suites.
public enum CachingFixtures {
    public static func folder(_ tag: String) -> String {
        let p = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-cache-\(tag)-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }

    public static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    public static func key(_ request: String, source: String = "a.jpg", mtime: Int64 = 1_700_000_000_000_000_000) -> CacheKey {
        CacheKey(canonicalRequest: request + "/-/" + source, outputFormat: "webp",
                 source: SourceIdentity(size: 1234, mtimeNanoseconds: mtime, inode: 42), sourcePath: source)
    }

    public static func image(_ count: Int, seed: UInt8 = 1, source: String = "a.jpg") -> CachedImage {
        var bytes = [UInt8](repeating: 0, count: count)
        var x = UInt32(seed) &* 2_654_435_761 &+ 1
        for i in 0..<count {
            x = x &* 1_103_515_245 &+ 12_345
            bytes[i] = UInt8(truncatingIfNeeded: x >> 16)
        }
        return CachedImage(data: bytes, format: .webp, digest: "e\(seed)", sourceModified: 1_700_000_000, sourcePath: source)
    }

    public static func files(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter { name in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDir) && !isDir.boolValue
        }.sorted()
    }

    /// Sets a file's modification (and access) time, seconds since the epoch.
    public static func setMtime(_ path: String, _ seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    public static func mtime(_ path: String) -> Int {
        var st = stat()
        _ = stat(path, &st)
        return st.st_mtim.tv_sec
    }

    public static func logger(_ recorder: LogRecorder) -> Logger {
        var logger = Logger(label: "kiln.cache.test") { _ in RecordingLogHandler(recorder: recorder) }
        logger.logLevel = .trace
        return logger
    }

    public static var quietLogger: Logger {
        Logger(label: "kiln.cache.test") { _ in SwiftLogNoOpLogHandler() }
    }

    /// Runs `body` on a new thread; the returned function waits for it.
    public static func thread(_ body: @escaping @Sendable () -> Void) -> () -> Void {
        let done = DispatchSemaphore(value: 0)
        let t = Thread {
            body()
            done.signal()
        }
        t.start()
        return { done.wait() }
    }
}

/// A value shared between test threads.
public final class Shared<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    public init(_ value: T) { self.value = value }
    public func with<R>(_ body: (inout T) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    public var get: T { with { $0 } }
}

public final class LogRecorder: @unchecked Sendable {
    public init() {}
    private let lock = NSLock()
    private var entries: [(Logger.Level, String)] = []
    public func add(_ level: Logger.Level, _ message: String) {
        lock.lock()
        entries.append((level, message))
        lock.unlock()
    }
    public func messages(_ level: Logger.Level) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return entries.filter { $0.0 == level }.map(\.1)
    }
}

public struct RecordingLogHandler: LogHandler {
    public let recorder: LogRecorder
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .trace
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    public func log(event: LogEvent) { recorder.add(event.level, event.message.description) }
}

/// A monotonic clock the tests move by hand.
public final class ManualClock: @unchecked Sendable {
    public init() {}
    public var nanoseconds: UInt64 = 1_000_000_000
    public var milliseconds: Int64 = 1_700_000_000_000
    public func advance(seconds: Double) {
        nanoseconds += UInt64(seconds * 1e9)
        milliseconds += Int64(seconds * 1000)
    }
}
