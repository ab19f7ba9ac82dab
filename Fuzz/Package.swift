// swift-tools-version:6.0
import PackageDescription

// Kiln's libFuzzer harnesses: a package of its own, so that the main package's build never sees
// -sanitize=fuzzer. scripts/fuzz builds it with
//   swift build -c release --sanitize=fuzzer --sanitize=address --scratch-path ../.build/fuzz
// which instruments Kiln's targets (coverage and ASan) as well as the harnesses.
//
// Adding a harness: a folder Sources/<Name>/ with one file defining
// `@_cdecl("LLVMFuzzerTestOneInput")`, and its name on one line below. Seeds go in
// Corpus/<Name>/ (optional), a libFuzzer dictionary in Dictionaries/<Name>.dict (optional).
let harnesses = [
    "FuzzSpecParser",
    "FuzzJPEGMarkers",
    "FuzzPNGChunks",
    "FuzzWebPContainer",
    "FuzzExif",
    "FuzzICC",
    "FuzzDecode",
    "FuzzURLSignature",
    "FuzzFastCGI",
    "FuzzContainers",
    "FuzzResample",
    "FuzzURLAdapters",
    "FuzzSVGSanitizer",
    "FuzzRasterInputs",
    "FuzzImgproxyAdapter",
    "FuzzThumborAdapter",
]

/// Harnesses that need more than the `KilnPipeline` library product: KilnFuzzProbes holds the
/// probes (`CodecProbe`, `ResamplerProbe`: Kiln's Tests/KilnFuzzProbes, not in the executables).
let extraProducts: [String: String] = [
    "FuzzFastCGI": "KilnFastCGI", "FuzzURLSignature": "KilnHTTP", "FuzzURLAdapters": "KilnHTTP",
    "FuzzImgproxyAdapter": "KilnHTTP", "FuzzThumborAdapter": "KilnHTTP",
    "FuzzJPEGMarkers": "KilnFuzzProbes", "FuzzPNGChunks": "KilnFuzzProbes", "FuzzWebPContainer": "KilnFuzzProbes",
    "FuzzExif": "KilnFuzzProbes", "FuzzICC": "KilnFuzzProbes", "FuzzDecode": "KilnFuzzProbes", "FuzzResample": "KilnFuzzProbes",
    "FuzzRasterInputs": "KilnFuzzProbes",
]

let package = Package(
    name: "KilnFuzz",
    dependencies: [.package(name: "Kiln", path: "..")],
    targets: harnesses.map { name in
        .executableTarget(
            name: name,
            dependencies: [.product(name: "KilnPipeline", package: "Kiln")]
                + (extraProducts[name].map { [.product(name: $0, package: "Kiln")] } ?? []),
            // The harness file defines no main: libFuzzer's runtime provides it.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    }
)
