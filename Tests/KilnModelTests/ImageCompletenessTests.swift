import Testing
@testable import KilnModel

/// Hand-made files of each format, whole and cut at every byte: only the whole ones are proven.
@Suite struct ImageCompletenessTests {
    /// A 2×1 GIF89a with a global colour table, a graphic control extension and two frames.
    static let gif: [UInt8] = Array("GIF89a".utf8) + [2, 0, 1, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        + [0x21, 0xF9, 4, 0, 10, 0, 0, 0]
        + frame + [0x21, 0xF9, 4, 0, 10, 0, 0, 0] + frame + [0x3B]
    static let frame: [UInt8] = [0x2C, 0, 0, 0, 0, 2, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0]

    /// SOI, APP0, DQT-like segment, SOF0, SOS with entropy data (a stuffed 0xFF00 and a restart
    /// marker inside), a second scan, EOI.
    static let jpeg: [UInt8] = [0xFF, 0xD8] + segment(0xE0, Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])
        + segment(0xDB, [0] + Array(repeating: 1, count: 64)) + segment(0xC0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0])
        + segment(0xDA, [1, 1, 0, 0, 63, 0]) + [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56]
        + segment(0xDA, [1, 1, 0, 0, 63, 0]) + [0x78, 0x9A] + [0xFF, 0xD9]

    static func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        + chunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]) + chunk("IDAT", [1, 2, 3, 4]) + chunk("IEND", [])

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let n = body.count
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(type.utf8) + body + [0, 0, 0, 0]
    }

    static let webp: [UInt8] = {
        let body = Array("WEBP".utf8) + Array("VP8L".utf8) + [5, 0, 0, 0, 0x2F, 0, 0, 0, 0, 0]
        let n = body.count
        return Array("RIFF".utf8) + [UInt8(n & 0xFF), UInt8(n >> 8), 0, 0] + body
    }()

    static let avif: [UInt8] = box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1".utf8))
        + box("meta", Array(repeating: 0, count: 20)) + box("mdat", Array(repeating: 7, count: 40))

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let n = body.count + 8
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(type.utf8) + body
    }

    static let all: [(String, [UInt8])] = [("gif", gif), ("jpeg", jpeg), ("png", png), ("webp", webp), ("avif", avif)]

    @Test(arguments: all.map(\.0))
    func aWholeFileIsCompleteAndEveryCutIsNot(name: String) {
        let bytes = Self.all.first { $0.0 == name }!.1
        #expect(ImageCompleteness.check(bytes) == .complete, "\(name): \(ImageCompleteness.check(bytes))")
        for cut in 0..<bytes.count {
            let verdict = ImageCompleteness.check(Array(bytes[..<cut]))
            #expect(verdict != .complete, "\(name) cut at \(cut) of \(bytes.count)")
        }
    }

    @Test func aGIFCutAfterAWholeFrameNeedsItsTrailer() {
        // The first frame complete, the second and the trailer missing: what a closed connection
        // after frame 1 of 2 leaves.
        let cut = Array(Self.gif[..<(Self.gif.count - Self.frame.count - 9)])
        #expect(ImageCompleteness.check(cut) == .unproven("a GIF without its trailer (0x3B)"))
    }

    @Test func aJPEGWithoutAScanOrWithBytesCutMidScanIsUnproven() {
        #expect(ImageCompleteness.check([0xFF, 0xD8, 0xFF, 0xD9]) != .complete)
        let midScan = Array(Self.jpeg[..<(Self.jpeg.count - 3)])
        #expect(ImageCompleteness.check(midScan) == .unproven("a JPEG cut in a scan"))
    }

    @Test func bytesAfterTheEndAreAllowedButOtherBytesAreUnproven() {
        #expect(ImageCompleteness.check(Self.gif + [0, 1, 2]) == .complete)
        #expect(ImageCompleteness.check(Self.png + [9]) == .complete)
        #expect(ImageCompleteness.check(Array("<html>oops</html>".utf8)) != .complete)
        #expect(ImageCompleteness.check([]) != .complete)
    }

    @Test func anISOBMFFBoxRunningToTheEndOrPastItProvesNothing() {
        let toEnd = Self.box("ftyp", Array("heic".utf8) + [0, 0, 0, 0]) + [0, 0, 0, 0] + Array("mdat".utf8) + [1, 2, 3]
        #expect(ImageCompleteness.check(toEnd) == .unproven("an ISOBMFF box that runs to the end of the file"))
        #expect(ImageCompleteness.check(Self.avif + [0, 0]) != .complete, "2 stray bytes are a cut box header")
        let withoutData = Self.box("ftyp", Array("avif".utf8) + [0, 0, 0, 0]) + Self.box("meta", [0, 0, 0, 0])
        #expect(ImageCompleteness.check(withoutData) == .unproven("an ISOBMFF file without meta and mdat boxes"))
        let large = Self.box("ftyp", Array("avif".utf8) + [0, 0, 0, 0]) + Self.box("meta", [0, 0, 0, 0]) + [0, 0, 0, 1] + Array("mdat".utf8)
            + [0, 0, 0, 0, 0, 0, 0, 20] + [1, 2, 3, 4]
        #expect(ImageCompleteness.check(large) == .complete)
        #expect(ImageCompleteness.check(Array(large.dropLast())) != .complete)
    }

    @Test func aWebPLongerThanItsRIFFSizeIsCompleteAndShorterIsNot() {
        #expect(ImageCompleteness.check(Self.webp + [0]) == .complete)
        #expect(ImageCompleteness.check(Array(Self.webp.dropLast())) != .complete)
    }
}
