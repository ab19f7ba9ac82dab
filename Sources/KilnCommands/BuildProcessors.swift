import KilnOrigins
import KilnHTTP
import KilnProcessing

/// The custom processors of this build (`Sources/kiln-cli/CustomProcessors.swift`, which
/// `kiln-worker` shares): the executable sets `registry` once, before any command runs and before
/// any thread starts (`main.swift`); the commands only read it.
public enum BuildProcessors {
    nonisolated(unsafe) public static var registry = ProcessorRegistry()
}
