import Foundation
import KilnModel
@testable import KilnCodecs
import Testing

/// Progressive files made here from corpus JPEGs with jpegtran (libjpeg-turbo-progs): the
/// default script, and two custom `-scans` scripts with successive-approximation refinement
/// scans and narrow non-interleaved bands. A scaled decode of the pruned stream must give the
/// same bytes as the scaled decode of the whole file.
@Suite struct ProgressiveScanPrunerTests {
    /// 4:2:0 colour, 4:4:4 colour, grey, CMYK (4:4:4:4, Adobe), odd sizes, restart markers (one
    /// per MCU row: RSTn inside the entropy-coded data the pruner skips).
    static let sources = ["exif_Portrait_6.jpg", "skimage_rocket.jpg", "grey:exif_Portrait_6.jpg",
                          "coffee_cmyk_swop_icc.jpg", "ljt_testorig.jpg", "restart:exif_Portrait_6.jpg"]
    static let scripts = ["default", "refinements", "narrow"]
    static let eighths = [1, 2, 4]   // 1/8, 1/4, 1/2

    static let pruning = JPEGDecoder(colorConverter: nil, prunesProgressiveScans: true)
    static let whole = JPEGDecoder(colorConverter: nil, prunesProgressiveScans: false)

    @Test(arguments: sources, scripts)
    func prunedDecodeIsByteIdentical(_ source: String, _ script: String) throws {
        let progressive = try Self.progressive(source, script: script)
        let header = try Self.whole.readHeader(progressive)
        for eighth in Self.eighths {
            let factor = (num: eighth, denom: 8)
            let minimum = PixelSize(width: TurboJPEGHandle.scaled(header.width, factor),
                                    height: TurboJPEGHandle.scaled(header.height, factor))
            let options = DecodeOptions(minimumSize: minimum)
            let full = try Self.whole.decode(progressive, options: options).buffer
            let pruned = try Self.pruning.decode(progressive, options: options).buffer
            #expect(full.width == minimum.width && full.height == minimum.height, "\(source) \(script) \(eighth)/8")
            #expect(pruned.width == full.width && pruned.height == full.height)
            #expect(pruned.pixels == full.pixels, "\(source) \(script) \(eighth)/8: \(PixelHelpers.meanAbsDiff(pruned, full))")
            if eighth == 1 {
                // At 1/8 every script leaves out more than a quarter of the entropy-coded data.
                let stream = progressive.withUnsafeBytes { ProgressiveScanPruner.prune($0, factor: factor) }
                let layout = try #require(progressive.withUnsafeBytes { JPEGScanLayout.parse($0) })
                let scanBytes = layout.scans.map(\.bytes.count).reduce(0, +)
                let dropped = progressive.count - (stream?.count ?? progressive.count)
                #expect(dropped > scanBytes / 4, "\(source) \(script): \(dropped) of \(scanBytes) scan bytes dropped")
            }
        }
    }

    @Test func defaultScriptAtOneEighthKeepsDCTheFirstLumaACScanAndChroma() throws {
        let progressive = try Self.progressive("exif_Portrait_6.jpg", script: "default")
        let layout = try #require(progressive.withUnsafeBytes { JPEGScanLayout.parse($0) })
        #expect(layout.scans.count == 10)
        let needs = ProgressiveScanPruner.neededCoefficients(layout.components, factor: (1, 8))
        #expect(needs[0] == 1)                                            // luma: DC only
        #expect(needs[1] == ProgressiveScanPruner.readMask(idctSize: 2))  // 4:2:0 chroma: 2×2 IDCT
        let kept = ProgressiveScanPruner.keptScans(layout, needs: needs)
        let keptBands = zip(layout.scans, kept).filter(\.1).map { "\($0.0.components):\($0.0.ss)-\($0.0.se)" }
        // DC first, luma 1-5 (against DC smoothing), both chroma AC scans, DC refinement, both chroma refinements.
        #expect(keptBands == ["[0, 1, 2]:0-0", "[0]:1-5", "[2]:1-63", "[1]:1-63", "[0, 1, 2]:0-0", "[2]:1-63", "[1]:1-63"])
    }

    @Test func reducedIDCTsReadOddLinesNotTheTopLeftCorner() {
        // Zigzag 1 = (0,1), 2 = (1,0), 3 = (2,0), 4 = (1,1), 5 = (0,2), 6 = (0,3), 63 = (7,7).
        let two = ProgressiveScanPruner.readMask(idctSize: 2)
        #expect([0, 1, 2, 4, 6, 63].allSatisfy { two & (1 << UInt64($0)) != 0 })
        #expect([3, 5].allSatisfy { two & (1 << UInt64($0)) == 0 })
        #expect(ProgressiveScanPruner.readMask(idctSize: 1) == 1)
        #expect(ProgressiveScanPruner.readMask(idctSize: 4).nonzeroBitCount == 49)
        #expect(ProgressiveScanPruner.readMask(idctSize: 8) == ~0)
    }

    @Test func leavesOtherFilesAlone() throws {
        for file in ["exif_Portrait_6.jpg", "afl_jpeg_002735.jpg", "rocket_truncated_50pct.jpg"] {   // baseline, arithmetic, truncated
            let data = try Corpus.data(file)
            #expect(data.withUnsafeBytes { ProgressiveScanPruner.prune($0, factor: (1, 8)) } == nil, "\(file)")
        }
        // 1000 scans: left whole, so that TurboJPEG's scan limit still refuses it.
        let bomb = try Corpus.data("jpeg_scan_bomb_2000x2000_1000scans.jpg")
        #expect(bomb.withUnsafeBytes { JPEGScanLayout.parse($0) } == nil)
        #expect(decodeFailure { try Self.pruning.decode(bomb, options: DecodeOptions(minimumSize: PixelSize(width: 250, height: 250))) } != nil)
        // A full-size decode is never pruned.
        let progressive = try Self.progressive("ljt_testorig.jpg", script: "default")
        #expect(progressive.withUnsafeBytes { ProgressiveScanPruner.prune($0, factor: (1, 1)) } == nil)
    }

    /// Truncations and corruptions: the parser ends on every input, drops nothing from a stream
    /// without EOI, emits only well-formed SOI…EOI streams no larger than the input, and decoding
    /// through it fails or succeeds without crashing.
    @Test(arguments: ["ljt_testorig.jpg", "skimage_rocket.jpg"])
    func survivesTruncatedAndCorruptedInput(_ source: String) throws {
        let progressive = try Self.progressive(source, script: "refinements")
        let header = try Self.whole.readHeader(progressive)
        let options = DecodeOptions(minimumSize: PixelSize(width: (header.width + 7) / 8, height: (header.height + 7) / 8))
        let step = max(1, progressive.count / 300)
        for length in stride(from: 0, to: progressive.count - 1, by: step) {
            let cut = Array(progressive[..<length])
            #expect(cut.withUnsafeBytes { ProgressiveScanPruner.prune($0, factor: (1, 8)) } == nil, "cut at \(length)")
            _ = try? Self.pruning.decode(cut, options: options)
        }
        var random = MutationTests.SplitMix(state: 0x4B696C6E)
        for round in 0..<400 {
            var mutated = progressive
            for _ in 0..<(1 + round % 4) {
                let at = Int(random.next() % UInt64(mutated.count))
                mutated[at] = round % 3 == 0 ? 0xFF : UInt8(truncatingIfNeeded: random.next())
            }
            if let pruned = mutated.withUnsafeBytes({ ProgressiveScanPruner.prune($0, factor: (1, 8)) }) {
                #expect(pruned.count < mutated.count)
                #expect(Array(pruned.prefix(2)) == [0xFF, 0xD8] && Array(pruned.suffix(2)) == [0xFF, 0xD9])
            }
            _ = try? Self.pruning.decode(mutated, options: options)
        }
    }

    // MARK: - Making progressive files

    /// `source` (a corpus file; "grey:" for its luma only, "restart:" with a restart interval of
    /// one MCU row) made progressive with jpegtran.
    static func progressive(_ source: String, script: String) throws -> [UInt8] {
        let grey = source.hasPrefix("grey:"), restart = source.hasPrefix("restart:")
        let file = source.split(separator: ":").last.map(String.init) ?? source
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-progressive-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let components = grey ? 1 : (DecodePlan.jpegComponents(try Corpus.data(file)) ?? 3)
        var arguments = ["-copy", "all"] + (grey ? ["-grayscale"] : []) + (restart ? ["-restart", "1"] : [])
        if script == "default" {
            arguments.append("-progressive")
        } else {
            let scans = folder.appendingPathComponent("\(script)-\(components)-\(UUID().uuidString).txt")
            try scanScript(script, components: components).write(to: scans, atomically: true, encoding: .utf8)
            arguments += ["-scans", scans.path]
        }
        // One file per call: tests run in parallel, and two of them make the same source and
        // script (one read the other's half-written file).
        let output = folder.appendingPathComponent("\(source.replacingOccurrences(of: ":", with: "-"))-\(script)-\(UUID().uuidString).jpg")
        arguments += ["-outfile", output.path, Corpus.folder.appendingPathComponent(file).path]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jpegtran")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        let data = [UInt8](try Data(contentsOf: output))
        try? FileManager.default.removeItem(at: output)
        #expect(data.withUnsafeBytes { JPEGScanLayout.parse($0) } != nil, "\(source) \(script) is progressive")
        return data
    }

    /// "refinements": DC and AC successive approximation (Ah/Al) with luma split in three bands;
    /// "narrow": non-interleaved DC and narrow bands per component, one refined band.
    static func scanScript(_ name: String, components: Int) -> String {
        let all = (0..<components).map(String.init).joined(separator: ",")
        let chroma = 1..<components
        var lines: [String] = []
        if name == "refinements" {
            lines.append("\(all): 0-0, 0, 1;")
            lines += ["0: 1-2, 0, 2;", "0: 3-9, 0, 2;"]
            lines += chroma.map { "\($0): 1-63, 0, 1;" }
            lines += ["0: 10-63, 0, 2;", "0: 1-63, 2, 1;", "\(all): 0-0, 1, 0;"]
            lines += chroma.map { "\($0): 1-63, 1, 0;" }
            lines.append("0: 1-63, 1, 0;")
        } else {
            lines += (0..<components).map { "\($0): 0-0, 0, 0;" }
            for c in 0..<components {
                lines += ["\(c): 1-1, 0, 0;", "\(c): 2-5, 0, 0;", "\(c): 6-20, 0, 1;", "\(c): 21-63, 0, 0;"]
            }
            lines += (0..<components).map { "\($0): 6-20, 1, 0;" }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
