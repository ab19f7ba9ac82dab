import KilnHTTP
import Glibc
import KilnPOSIX
import Logging

/// Kiln's swift-log handler: every line in `log.format` (`LogLine`), written to stderr with one
/// `write` per line, so lines of the master and the workers sharing the file never interleave
/// (pipes and files opened for appending keep a write of one line whole).
public struct LogLineHandler: LogHandler {
    public var format: LogFormat
    public let label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    /// Where lines go: stderr.
    let fd: Int32

    public init(label: String, format: LogFormat, level: Logger.Level,
                metadataProvider: Logger.MetadataProvider? = RequestContext.metadataProvider, fd: Int32 = 2) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.metadataProvider = metadataProvider
        self.fd = fd
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let line = LogLine.format(format, time: LogLine.timestamp(millisecondsSinceEpoch: WallClock.milliseconds()),
                                  level: event.level, label: label, message: event.message.description, metadata: all)
        try? FileDescriptorIO.writeAll(fd, Array(line.utf8))
    }

    /// Sets up swift-log for this process (once): `LogLineHandler` at `configuration.level` (or
    /// `level`) in `configuration.format`, the request id provider, and `AccessLog.process` from
    /// the `[log]` settings. Returns the process's logger, `kiln.<role>` with its `pid`.
    public static func bootstrap(_ configuration: LogConfiguration, level: Logger.Level? = nil, role: String) -> Logger {
        let format = configuration.format
        let level = level ?? configuration.level
        LoggingSystem.bootstrap({ label, provider in
            LogLineHandler(label: label, format: format, level: level, metadataProvider: provider)
        }, metadataProvider: RequestContext.metadataProvider)
        AccessLog.process = AccessLog(configuration)
        var logger = Logger(label: "kiln.\(role)")
        logger[metadataKey: "pid"] = .stringConvertible(Int(getpid()))
        return logger
    }
}
