import Foundation
import KilnCodecs
import KilnFuzzProbes
import KilnModel
import Testing

/// Replays the inputs the fuzzers found (Tests/fuzz-regressions/<harness>/) through the same
/// entry points as the harnesses in Fuzz/Sources/: each must end in a result or a typed error,
/// never a trap. Folders of harnesses outside the codecs (the URL signature check, the FastCGI
/// record reader) are replayed by their own modules' tests.
@Suite struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // KilnCodecsTests
        .deletingLastPathComponent()   // Tests
        .appendingPathComponent("fuzz-regressions")

    /// The harnesses replayed here, by folder name.
    static let harnesses = ["FuzzSpecParser", "FuzzJPEGMarkers", "FuzzPNGChunks", "FuzzWebPContainer",
                            "FuzzExif", "FuzzICC", "FuzzDecode", "FuzzRasterInputs", "FuzzSVGSanitizer"]

    /// (harness, file name) of every regression input.
    static let inputs: [(String, String)] = harnesses.flatMap { harness in
        let dir = folder.appendingPathComponent(harness)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { (harness, $0) }
    }

    /// The fuzz spec harness's parser (Fuzz/Sources/FuzzSpecParser).
    static let parser = SpecParser(
        maxDimension: 16_384, maxOperations: 16, maxSigma: 50,
        presets: ["avatar": "rs:96:96:fill/circle/f:webp", "thumb": "w:200/q:70", "blurry": "bl:3/gs"],
        customResolver: { name, arguments throws(SpecError) -> CustomOperation? in
            guard name == "custom" else { return nil }
            guard arguments.count <= 2 else { throw .invalidOption(segment: name, reason: "too many arguments") }
            return CustomOperation(name: name, arguments: arguments, identifier: "custom-v1")
        })

    @Test func everyHarnessHasAFolder() {
        for harness in Self.harnesses {
            var isFolder: ObjCBool = false
            let path = Self.folder.appendingPathComponent(harness).path
            #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue, "\(path)")
        }
        #expect(!Self.inputs.isEmpty)
    }

    @Test(arguments: inputs.map { "\($0.0)/\($0.1)" })
    func replays(_ relative: String) throws {
        let harness = String(relative.split(separator: "/")[0])
        let data = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(relative)))
        switch harness {
        case "FuzzSpecParser":
            let text = String(decoding: data, as: UTF8.self)
            for isDecoded in [false, true] {
                do {
                    let request = try Self.parser.parse(text, isDecoded: isDecoded)
                    #expect(!request.sourcePath.isEmpty)
                } catch {
                    #expect(!"\(error)".isEmpty)
                }
            }
        case "FuzzJPEGMarkers": expectTyped { () throws(DecodeError) in _ = try CodecProbe.jpegMarkers(data) }
        case "FuzzPNGChunks": expectTyped { () throws(DecodeError) in _ = try CodecProbe.pngChunks(data) }
        case "FuzzWebPContainer": expectTyped { () throws(DecodeError) in _ = try CodecProbe.webpContainer(data) }
        case "FuzzExif": #expect((1...8).contains(CodecProbe.exif(data).orientation))
        case "FuzzICC": #expect(CodecProbe.iccProfile(data).iccProfileBytes == data.count)
        case "FuzzDecode":
            let limits = DecodeLimits(maxPixels: 1 << 20, maxAnimationPixels: 4 << 20)
            for minimum in [nil, PixelSize(width: 16, height: 16)] {
                expectTyped { () throws(DecodeError) in
                    _ = try CodecProbe.decodePath(data, sniffer: MagicSniffer(), limits: limits, minimumSize: minimum,
                                                  converter: SRGBConverter(cacheCapacity: 2))
                }
            }
        case "FuzzRasterInputs":
            let limits = DecodeLimits(maxPixels: 1 << 20, maxAnimationPixels: 4 << 20)
            expectTyped { () throws(DecodeError) in _ = try CodecProbe.rasterInput(data, limits: limits) }
        case "FuzzSVGSanitizer":
            // As the harness: what the sanitiser accepts, it accepts again unchanged.
            if let first = try? SVGSanitizer.sanitize(data) {
                let second = try SVGSanitizer.sanitize(first.document)
                #expect(second.document == first.document,
                        "\(String(decoding: first.document, as: UTF8.self))\n!=\n\(String(decoding: second.document, as: UTF8.self))")
            }
        default:
            Issue.record("no replay for harness \(harness)")
        }
    }

    /// Runs `body`: a result or a `DecodeError` with a message are both fine.
    private func expectTyped(_ body: () throws(DecodeError) -> Void) {
        do {
            try body()
        } catch {
            let message: String
            switch error {
            case let .corrupt(m), let .overLimit(m), let .unsupported(m): message = m
            }
            #expect(!message.isEmpty)
        }
    }
}
