// swift-tools-version:6.0
import PackageDescription

// Layering: each target imports only targets listed above it; the compiler enforces the rule
// through the dependency lists below (a wrong-direction import does not build), and
// `scripts/check-layers` (run by scripts/test) that every import, C modules included, is a direct
// dependency listed here: reaching a module through another target's dependencies fails it.
//
//   C targets        system libraries, dlopen shims (CAvif CHeif CRsvg CTiff CJxl CKilnFetch) and fixed-arity shims:
//                    CKilnCodecShims (setjmp/longjmp codec calls), CKilnProcessShims (spawn, signals, scoreboard),
//                    CKilnResample (the resampler's fixed-point kernel: portable C and AVX2, chosen at run time)
//   KilnPOSIX        fd I/O, files, clocks, locks, threads, sleeps: the only Swift target that reads errno
//   KilnModel        request model, spec parser, PixelBuffer, seams (protocols), the settings framework, guards
//   KilnCodecs       decoders, encoders, sniffing, colour: the only Swift target that sees codec C pointers
//   KilnProcessing   resampler and processors over PixelBuffer (the only Swift target that sees CKilnResample)
//   KilnPipeline     the pipeline, its caches and render locks, local files (no HTTP, FastCGI or origins)
//   KilnHTTP         HTTP request/response, image handler, request gate, error mapping, URL signatures
//   KilnOrigins      HTTP and S3 sources (libcurl), SigV4, the SSRF guard, one fetch per source
//   KilnFastCGI      FastCGI records, record reader and connection (a product of its own for Fuzz/)
//   KilnTracing      OpenTelemetry traces: trace context, sampler, OTLP/HTTP protobuf export (no HTTP serving)
//   KilnServer       master (Supervisor decisions + I/O shell), worker, responder, scoreboard, metrics, logs
//   KilnConfigFile   the TOML file and the layering of file, environment and flags (master and CLI only)
//   KilnCommands     the ArgumentParser commands
//   kiln (Sources/kiln-cli), kiln-worker   the executables
//
// Folder names repeat across targets only for the same kind of thing: `Settings/` holds a target's
// own settings sections (each key declared once, beside the code that reads it; `[source]` and
// `[limits]` are split that way, each part saying where the rest lives), `Seams/` its protocols.
//
// Kiln is Linux-only: it uses Glibc, memfd_create, prctl(PR_SET_PDEATHSIG) and posix_spawn file
// actions as found on Linux, so the package declares no Apple platforms.
//
// Every target builds with the default -O (bounds and overflow checks on): the codecs parse
// untrusted bytes. The few measured hot kernels in KilnProcessing use explicit unsafe buffer
// pointers instead (the resampler's HorizontalFilter and VerticalFilter).

// Memory (docs/benchmarks.md, "Memory"): the release `kiln` links the Swift runtime and Foundation statically,
// as `--static-swift-stdlib` does, but at link time only (the objects are the same: a few seconds
// more, not a rebuild), with lld, packed relative relocations (DT_RELR, glibc 2.36+: 36 KiB
// instead of 2 MiB of relocations read at every start) and no exported dynamic symbols (the
// executable's symbol table is not searched by every library lookup). TOMLKit (KilnConfigFile:
// the master and the command line) needs Foundation (Date, Calendar, Data): hence the Foundation
// libraries after `-static-stdlib`'s own list. Debug builds (`swift test`) stay dynamic.
let staticSwiftRuntime: [LinkerSetting] = [
    .unsafeFlags([
        "-static-stdlib",
        "-lFoundationInternationalization", "-lFoundationEssentials", "-l_FoundationCShims",
        "-l_FoundationCollections", "-lCoreFoundation", "-l_FoundationICU", "-lstdc++",
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--no-export-dynamic",
    ] + linkOrder("Sources/kiln-cli/kiln.order"), .when(platforms: [.linux], configuration: .release)),
]

// `kiln-worker` (what `kiln serve` spawns) reads no TOML and no command line: it links the same
// way but without Foundation, its ICU and ArgumentParser (FoundationEssentials only, which
// swift-crypto and swift-metrics use): a worker idles at about 9 MiB instead of 16.
let staticWorkerRuntime: [LinkerSetting] = [
    .unsafeFlags([
        "-static-stdlib",
        "-lFoundationEssentials", "-l_FoundationCShims", "-l_FoundationCollections", "-lstdc++",
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--no-export-dynamic",
    ] + linkOrder("Sources/kiln-worker/kiln-worker.order"), .when(platforms: [.linux], configuration: .release)),
]

/// lld places the functions listed in `file` (one symbol a line: those a process runs at start and
/// for the first requests) first and together in .text, so that the kernel's 64 KiB fault-around
/// maps fewer unused pages. `scripts/bench-tools/link-order` regenerates the lists.
func linkOrder(_ file: String) -> [String] {
    ["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/\(file)", "-Xlinker", "--no-warn-symbol-ordering"]
}

let package = Package(
    name: "Kiln",
    products: [
        .executable(name: "kiln", targets: ["kiln"]),
        .executable(name: "kiln-worker", targets: ["kiln-worker"]),
        .library(name: "KilnPipeline", targets: ["KilnPipeline"]),
        // For the fuzz harnesses (Fuzz/).
        .library(name: "KilnHTTP", targets: ["KilnHTTP"]),
        .library(name: "KilnFastCGI", targets: ["KilnFastCGI"]),
        .library(name: "KilnFuzzProbes", targets: ["KilnFuzzProbes"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CMagic", pkgConfig: "libmagic", providers: [.apt(["libmagic-dev"])]),
        .systemLibrary(name: "CLcms2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CGif", providers: [.apt(["libgif-dev"])]),
        // libavif and libheif: headers only; the shims load the libraries on first use (dlopen).
        .target(name: "CAvif", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CHeif", linkerSettings: [.linkedLibrary("dl")]),
        // librsvg (with cairo), libtiff and libjxl: loaded on first use too. librsvg's shim draws
        // the whole document in C (GObject and cairo calls Swift has no headers for).
        .target(name: "CRsvg", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CTiff", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CJxl", linkerSettings: [.linkedLibrary("dl")]),
        // The codec calls Swift cannot make (libjpeg's and libpng's setjmp/longjmp error handling).
        .target(name: "CKilnCodecShims", dependencies: ["CPNG", "CJPEG", "CDeflate"]),
        // The process calls Swift cannot make (posix_spawn file actions, prctl, signal masks, the
        // shared-memory scoreboard's atomics, environ).
        .target(name: "CKilnProcessShims"),
        // libcurl is loaded by the shim on first use (dlopen): servers without origins never map it.
        .target(name: "CKilnFetch", linkerSettings: [.linkedLibrary("dl")]),
        // The resampler's inner loops in 16-bit fixed point: a portable C path and an AVX2 path
        // (per-function `target("avx2")`, picked by `__builtin_cpu_supports`), no dependencies.
        .target(name: "CKilnResample"),

        .target(name: "KilnPOSIX", dependencies: [.product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "KilnModel", dependencies: [
            "KilnPOSIX",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "KilnCodecs", dependencies: [
            "KilnModel", "CTurboJPEG", "CPNG", "CWebP", "CMagic", "CLcms2", "CDeflate", "CGif", "CAvif", "CHeif", "CRsvg", "CTiff", "CJxl",
            "CKilnCodecShims",
        ]),
        .target(name: "KilnProcessing", dependencies: ["KilnModel", "CKilnResample"]),
        .target(name: "KilnPipeline", dependencies: [
            "KilnModel", "KilnCodecs", "KilnProcessing", "KilnPOSIX",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "KilnHTTP", dependencies: [
            "KilnPipeline", "KilnModel", "KilnPOSIX",
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "KilnOrigins", dependencies: [
            "KilnPipeline", "KilnModel", "KilnPOSIX", "CKilnFetch",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "KilnFastCGI", dependencies: ["KilnPOSIX"]),
        // OpenTelemetry traces: W3C trace context, the sampler, OTLP/HTTP protobuf, the bounded exporter.
        .target(name: "KilnTracing", dependencies: [
            "KilnModel", "KilnOrigins", "KilnPOSIX",
            .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "KilnServer", dependencies: [
            "KilnPipeline", "KilnHTTP", "KilnOrigins", "KilnFastCGI", "KilnTracing", "KilnCodecs", "KilnProcessing", "KilnModel", "KilnPOSIX",
            "CKilnProcessShims",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
        ]),
        // The TOML file and the layering of settings: the master and the command line only.
        .target(name: "KilnConfigFile", dependencies: [
            "KilnModel", "KilnPOSIX", "CKilnProcessShims",
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        .target(name: "KilnCommands", dependencies: [
            "KilnServer", "KilnConfigFile", "KilnHTTP", "KilnOrigins", "KilnFastCGI", "KilnPipeline", "KilnCodecs", "KilnProcessing", "KilnModel", "KilnPOSIX",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "kiln", dependencies: ["KilnCommands", "KilnProcessing"], path: "Sources/kiln-cli",
                          exclude: ["kiln.order"], linkerSettings: staticSwiftRuntime),
        // Sources/kiln-worker/CustomProcessors.swift is a link to Sources/kiln-cli's: one list.
        .executableTarget(name: "kiln-worker", dependencies: [
            "KilnServer", "KilnModel", "KilnProcessing", "KilnPOSIX",
        ], exclude: ["kiln-worker.order"], linkerSettings: staticWorkerRuntime),

        // Shared by the test targets (not shipped). KilnTestSupport: one double per pipeline seam
        // (source, decoder, encoder, processor, disk cache, render lock, observer) and the caching
        // fixtures. KilnTestBytes: test files written byte by byte (tiny PNGs and GIFs, FastCGI
        // records), with no dependency at all, so that the codec tests need not see the pipeline.
        .target(name: "KilnTestSupport", dependencies: [
            "KilnPipeline", "KilnModel", .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/KilnTestSupport"),
        .target(name: "KilnTestBytes", path: "Tests/KilnTestBytes"),
        // The fuzz harnesses' probes (CodecProbe, ResamplerProbe), also run by the codec and
        // resampler tests: the `package` parsers and kernels over arbitrary bytes. Not shipped.
        .target(name: "KilnFuzzProbes", dependencies: ["KilnCodecs", "KilnProcessing", "KilnModel"], path: "Tests/KilnFuzzProbes"),

        .testTarget(name: "KilnPOSIXTests", dependencies: ["KilnPOSIX"]),
        .testTarget(name: "KilnModelTests", dependencies: ["KilnModel", "KilnTestBytes"]),
        .testTarget(name: "KilnCodecsTests", dependencies: ["KilnCodecs", "KilnModel", "CLcms2", "KilnTestBytes", "KilnFuzzProbes"]),
        // KilnCodecs: the resampler's fidelity tests decode the shared photos.
        .testTarget(name: "KilnProcessingTests", dependencies: ["KilnProcessing", "KilnCodecs", "KilnModel", "KilnFuzzProbes", "CKilnResample"]),
        // Golden/: the digests and the source files of GoldenDigestTests, read by path.
        .testTarget(name: "KilnPipelineTests", dependencies: ["KilnPipeline", "KilnCodecs", "KilnProcessing", "KilnModel", "KilnHTTP",
                                                             "KilnTestSupport", "KilnTestBytes"],
                    exclude: ["Golden"]),
        .testTarget(name: "KilnHTTPTests", dependencies: ["KilnHTTP", "KilnPipeline", "KilnModel", "KilnTestBytes",
                                                         .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "KilnOriginsTests", dependencies: [
            "KilnOrigins", "KilnPipeline", "KilnHTTP", "KilnModel", "KilnPOSIX", "KilnTestSupport",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "KilnTracingTests", dependencies: [
            "KilnTracing", "KilnModel", "KilnPOSIX", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "KilnServerTests", dependencies: [
            "KilnServer", "KilnTracing", "KilnHTTP", "KilnOrigins", "KilnFastCGI", "KilnConfigFile", "KilnPipeline", "KilnCodecs",
            "KilnProcessing", "KilnModel", "KilnPOSIX", "CKilnProcessShims", "KilnTestBytes",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
        ]),
    ]
)
