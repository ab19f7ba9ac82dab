import KilnFastCGI
import KilnHTTP
import KilnModel
import KilnProcessing
import Logging

/// `[debug]`: switches for measuring, never for production.
public struct DebugConfiguration: ConfigSection, Equatable {
    /// Workers answer every request with their PID instead of rendering (`scripts/bench`'s `hop` row).
    public var echoHandler = Key.echoHandler.defaultValue
    /// Registers the `sleep:<ms>` processor (`SleepProcessor`) for the integration tests' slow requests.
    public var sleepProcessor = Key.sleepProcessor.defaultValue
    /// Decodes sleep as long as their source asks (`SleepingDecoders`) for the integration tests.
    public var sleepDecode = Key.sleepDecode.defaultValue
    /// The resampler's code path (`ResamplerKernel`), applied by each worker at start.
    public var resampler = Key.resampler.defaultValue

    public enum Key {
        public static let echoHandler = Setting.bool("debug.echo_handler", default: false,
                                                     doc: "answer every request with the worker's PID instead of rendering (benchmarks of the FastCGI hop)")
        public static let sleepProcessor = Setting.bool("debug.sleep_processor", default: false,
                                                        doc: "add the URL option `sleep:<ms>` (0…60000), a processor stage that holds the render that long, for the integration tests' slow requests; never in production (any client could hold a worker)")
        public static let sleepDecode = Setting.bool("debug.sleep_decode", default: false,
                                                     doc: "a decode (still, or before the first frame of an animation) sleeps as long as its source asks with the text `kiln-sleep-decode=<ms>` in its first 64 KiB, for the integration tests' slow decodes; never in production")
        public static let resampler = Setting<ResamplerKernel>.choice("debug.resampler", default: .automatic,
                                                                      doc: "the resampler's code: `auto` is the fixed-point kernel, AVX2 where the CPU has it and portable C elsewhere "
                                                                          + "(the same bytes on every host, so one fleet stores one result per cache key); `portable` and `avx2` force "
                                                                          + "a path of that kernel (the same bytes, for measurements); `float` is the Swift float reference, other "
                                                                          + "bytes: measurements and tests only, never a fleet")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.echoHandler) { $0.echoHandler = $1 },
        ConfigField(Key.sleepProcessor) { $0.sleepProcessor = $1 },
        ConfigField(Key.sleepDecode) { $0.sleepDecode = $1 },
        ConfigField(Key.resampler) { $0.resampler = $1 },
    ]

    public init() {}

    /// Makes `resampler` the kernel of this process (`ResamplerKernel.processDefault`): a worker
    /// calls it at start, before its first render. Warns when it is not the default.
    public func applyResampler(_ logger: Logger) {
        ResamplerKernel.processDefault = resampler
        if resampler == .float {
            logger.warning("\(Key.resampler.key) = float: the float reference resampler writes other bytes than the fleet's kernel; measurements only")
        } else if resampler != Key.resampler.defaultValue {
            logger.notice("\(Key.resampler.key) = \(resampler.rawValue)")
        }
    }
}
