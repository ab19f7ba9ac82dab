// swift-tools-version:6.0
import PackageDescription

// Layering (C stays at the edges):
//   CTurboJPEG CJPEG CPNG CWebP CMagic CLcms2 CDeflate CGif CAvif CHeif CKilnShims   system libraries + fixed-arity C shims
//   KilnSystem      POSIX plumbing: read-all / write-all, atomic file writes, errno text, sleeps, clocks
//   KilnCore        request model, spec parser, PixelBuffer, seams (protocols), errors; no C
//   KilnCodecs      decoders, encoders, type sniffing: the only core target that sees C pointers
//   KilnProcessing  resampler and processors over PixelBuffer; no C
//   Kiln            the pipeline (load, sniff, decode, process, encode) and its default stages
//   KilnServer      FastCGI responder (its own record reader, no libfcgi), master/worker processes, HTTP mapping, configuration
//   KilnConfigFile  the TOML file (TOMLKit, hence Foundation) and the layering of settings: master and CLI only
//   kiln            the command line and the master
//   kiln-worker     a worker process (spawned by `kiln serve`; no TOML, Foundation or ArgumentParser)
//
// Kiln is Linux-only: it uses Glibc, memfd_create, prctl(PR_SET_PDEATHSIG) and posix_spawn file
// actions as found on Linux, so the package declares no Apple platforms.
//
// Every target builds with the default -O (bounds and overflow checks on): the codecs parse
// untrusted bytes. The few measured hot kernels in KilnProcessing use explicit unsafe buffer
// pointers instead (the resampler's HorizontalFilter and VerticalFilter).

// Memory (README "Memory"): the release `kiln` links the Swift runtime and Foundation statically,
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
    ] + linkOrder("Sources/kiln/kiln.order"), .when(platforms: [.linux], configuration: .release)),
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
        .library(name: "Kiln", targets: ["Kiln"]),
        // For the fuzz harnesses (Fuzz/): the FastCGI record reader lives in KilnServer.
        .library(name: "KilnServer", targets: ["KilnServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
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
        .target(name: "CKilnShims", dependencies: ["CPNG", "CJPEG", "CDeflate"]),

        // libcurl is loaded by the shim on first use (dlopen): servers without origins never map it.
        .target(name: "CKilnFetch", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "KilnSystem", dependencies: ["CKilnFetch"]),
        .target(name: "KilnCore", dependencies: [
            "KilnSystem",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "KilnCodecs", dependencies: [
            "KilnCore", "CTurboJPEG", "CPNG", "CWebP", "CMagic", "CLcms2", "CDeflate", "CGif", "CAvif", "CHeif", "CKilnShims",
        ]),
        .target(name: "KilnProcessing", dependencies: ["KilnCore"]),
        .target(name: "Kiln", dependencies: [
            "KilnCore", "KilnCodecs", "KilnProcessing", "KilnSystem",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "KilnServer", dependencies: [
            "Kiln", "KilnCodecs", "KilnSystem", "CKilnShims",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
        ]),
        // The TOML file and the layering of settings: the master and the command line only.
        .target(name: "KilnConfigFile", dependencies: [
            "KilnServer", "KilnCore", "KilnSystem", "CKilnShims",
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),
        .executableTarget(name: "kiln", dependencies: [
            "Kiln", "KilnServer", "KilnConfigFile", "KilnSystem",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], exclude: ["kiln.order"], linkerSettings: staticSwiftRuntime),
        // Sources/kiln-worker/CustomProcessors.swift is a link to Sources/kiln's: one list.
        .executableTarget(name: "kiln-worker", dependencies: [
            "KilnServer", "KilnCore", "KilnProcessing", "KilnSystem",
        ], exclude: ["kiln-worker.order"], linkerSettings: staticWorkerRuntime),

        .testTarget(name: "KilnSystemTests", dependencies: ["KilnSystem"]),
        .testTarget(name: "KilnCoreTests", dependencies: ["KilnCore"]),
        .testTarget(name: "KilnCodecsTests", dependencies: ["KilnCodecs"]),
        .testTarget(name: "KilnProcessingTests", dependencies: ["KilnProcessing"]),
        .testTarget(name: "KilnTests", dependencies: ["Kiln"]),
        .testTarget(name: "KilnServerTests", dependencies: ["KilnServer", "KilnConfigFile"]),
    ]
)
