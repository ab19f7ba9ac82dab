import Testing
import KilnModel
@testable import KilnPipeline

/// How much the decoder may shrink on load for the leading resize.
@Suite struct ShrinkOnLoadTests {
    func minimum(_ path: String, _ w: Int, _ h: Int, orientation: Int = 1) throws -> PixelSize? {
        let request = try SpecParser().parse(path)
        return ImagePipeline.minimumDecodeSize(for: request, header: ImageHeader(format: .jpeg, width: w, height: h, orientation: orientation))
    }

    @Test func keepsAMarginAboveTheOutputSize() throws {
        // 300x225 out of 4000x3000: at least 1.25 × the output on each axis.
        #expect(try minimum("/rs:300:300/a.jpg", 4000, 3000) == PixelSize(width: 375, height: 282))
        // 800 of 1920 wide needs 1000 pixels: a 1/2 decode (960) no longer qualifies.
        #expect(try minimum("/w:800/a.jpg", 1920, 1080) == PixelSize(width: 1000, height: 563))
    }

    @Test func nothingToGainOrNoLeadingResize() throws {
        #expect(try minimum("/w:1800/a.jpg", 1920, 1080) == nil)
        #expect(try minimum("/gs/w:100/a.jpg", 1920, 1080) == nil)
    }

    @Test func rotatedSourcesAskInStoredOrientation() throws {
        // Displayed 1200x1800 (EXIF 6 of a 1800x1200 file): the request's width is the stored height.
        let m = try minimum("/w:300/a.jpg", 1800, 1200, orientation: 6)
        #expect(m == PixelSize(width: 563, height: 375))
    }
}
