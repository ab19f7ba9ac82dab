import KilnProcessing

/// The custom processors of this build: each name becomes a URL option (`/posterize:4/cat.jpg`).
///
/// To add one, write a type conforming to `ImageProcessing` (an `identifier` that spells out
/// every argument, since it goes into the cache key, and a `process` over the `PixelBuffer`) and
/// register a constructor that validates the URL's arguments. Built-in option names always win.
enum CustomProcessors {
    static let registry: ProcessorRegistry = {
        var registry = ProcessorRegistry()
        registry.register("posterize", make: Posterize.make)
        return registry
    }()
}
