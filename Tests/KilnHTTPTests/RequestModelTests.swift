import Testing
import KilnHTTP
@testable import KilnModel

@Suite struct RequestModelTests {
    @Test func autoFormatFollowsAccept() {
        let out = OutputOptions(format: .auto)
        #expect(out.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: "image/avif,image/webp,*/*")) == .avif)
        #expect(out.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: "image/*")) == .webp)
        #expect(out.resolvedFormat(source: .png, accepted: FormatNegotiation(accept: "*/*")) == .png)
        #expect(out.resolvedFormat(source: .png, accepted: FormatNegotiation(accept: "image/webp;q=0, image/*")) == .png)
        #expect(out.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: nil)) == .jpeg)
        #expect(OutputOptions(format: .format(.png)).resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: "image/webp")) == .png)
    }

    @Test func formatsFromMime() {
        #expect(ImageFormat(mimeType: "image/jpeg") == .jpeg)
        #expect(ImageFormat(mimeType: "image/webp") == .webp)
        #expect(ImageFormat(mimeType: "image/gif") == .gif)
        #expect(ImageFormat(mimeType: "text/plain") == nil)
    }

    @Test func limitsRejectHugeHeadersAndAnimations() {
        let limits = DecodeLimits()
        #expect(throws: DecodeError.self) { try limits.check(ImageHeader(format: .png, width: 12000, height: 12000)) }
        #expect(throws: DecodeError.self) { try limits.check(ImageHeader(format: .webp, width: 4000, height: 4000, frameCount: 500)) }
        #expect(throws: DecodeError.self) { try limits.check(ImageHeader(format: .jpeg, width: 0, height: 10)) }
        #expect(throws: Never.self) { try limits.check(ImageHeader(format: .jpeg, width: 7000, height: 5600)) }
    }

    @Test func displayedSizeSwapsForRotations() {
        #expect(ImageHeader(format: .jpeg, width: 1800, height: 1200, orientation: 6).displayedSize == PixelSize(width: 1200, height: 1800))
        #expect(ImageHeader(format: .jpeg, width: 1800, height: 1200, orientation: 3).displayedSize == PixelSize(width: 1800, height: 1200))
    }

    @Test func digestIsSHA256() {
        #expect(Digest.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func timelineFormatsServerTiming() {
        var t = Timeline()
        t.add("decode", milliseconds: 12.345)
        t.add("encode", milliseconds: 1)
        t.add("decode", milliseconds: 1)
        #expect(t.serverTimingHeader == "decode;dur=13.35, encode;dur=1.0, total;dur=14.35")
    }
}
