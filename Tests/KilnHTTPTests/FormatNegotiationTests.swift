import Testing
@testable import KilnHTTP
import KilnModel

/// `f:auto`: AVIF > WebP > the source's format per `Accept`, collapsed into a few classes.
@Suite struct FormatNegotiationTests {
    static let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
    static let safari17 = "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5"
    static let firefox = "image/avif,image/webp,*/*"

    @Test func realBrowsersCollapseIntoOneClass() {
        for accept in [Self.chromium, Self.safari17, Self.firefox] {
            let n = FormatNegotiation(accept: accept)
            #expect(n.formats == [.avif, .webp], "\(accept)")
            #expect(n.token == "avif+webp")
        }
        #expect(FormatNegotiation(accept: "*/*").token == "source")
        #expect(FormatNegotiation(accept: nil).token == "source")
        #expect(FormatNegotiation(accept: "image/webp,*/*").token == "webp")
        #expect(FormatNegotiation(accept: "image/*").token == "webp")       // WebP by wildcard, AVIF never
        #expect(FormatNegotiation(accept: "image/avif").token == "avif")
        #expect(FormatNegotiation(accept: "image/avif;q=0, image/webp").token == "webp")
        #expect(FormatNegotiation(accept: "IMAGE/AVIF ; q=0.4").token == "avif")
    }

    @Test func offeredFormatsDecideOrderAndMembership() {
        #expect(FormatNegotiation(accept: Self.chromium, offered: [.webp]).token == "webp")
        #expect(FormatNegotiation(accept: Self.chromium, offered: [.webp, .avif]).formats == [.webp, .avif])
        #expect(FormatNegotiation(accept: Self.chromium, offered: []).token == "source")
        #expect(FormatNegotiation(accept: "image/avif", offered: [.webp]).token == "source")
    }

    @Test func resolvedFormatPrefersAVIFThenWebPThenSource() {
        let auto = OutputOptions(format: .auto)
        let small = PixelSize(width: 100, height: 100)
        #expect(auto.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: Self.chromium), size: small, hasAlpha: false) == .avif)
        #expect(auto.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: Self.chromium, offered: [.webp]), size: small, hasAlpha: false) == .webp)
        #expect(auto.resolvedFormat(source: .png, accepted: FormatNegotiation(accept: "*/*"), size: small, hasAlpha: true) == .png)
        // AVIF stops at 16384 px, WebP at 16383: a 16384-wide result is AVIF, a wider one the source's.
        #expect(auto.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: Self.chromium), size: PixelSize(width: 16_384, height: 10), hasAlpha: false) == .avif)
        #expect(auto.resolvedFormat(source: .jpeg, accepted: FormatNegotiation(accept: Self.chromium), size: PixelSize(width: 16_385, height: 10), hasAlpha: false) == .jpeg)
        // A HEIC source is never written as HEIC: PNG with alpha, JPEG without.
        #expect(auto.resolvedFormat(source: .heic, accepted: FormatNegotiation(accept: "*/*"), size: small, hasAlpha: true) == .png)
        #expect(OutputOptions().resolvedFormat(source: .heic, accepted: FormatNegotiation(accept: nil), size: small, hasAlpha: false) == .jpeg)
        #expect(OutputOptions().resolvedFormat(source: .avif, accepted: FormatNegotiation(accept: nil), size: small, hasAlpha: false) == .avif)
    }

    @Test func mimeTypesAndExtensions() {
        #expect(ImageFormat(mimeType: "image/avif") == .avif)
        #expect(ImageFormat(mimeType: "image/heic") == .heic)
        #expect(ImageFormat(mimeType: "image/heif") == .heic)
        #expect(ImageFormat(fileExtension: "HEIC") == .heic)
        #expect(ImageFormat(fileExtension: "avif") == .avif)
        #expect(!ImageFormat.heic.isEncodable && ImageFormat.avif.isEncodable && ImageFormat.avif.supportsAlpha)
    }

    @Test func heicIsNotAnOutputFormat() throws {
        #expect(throws: (any Error).self) { try SpecParser().parse("/f:heic/a.jpg", isDecoded: true) }
        let request = try SpecParser().parse("/f:avif/a.jpg", isDecoded: true)
        #expect(request.output.format == .format(.avif))
    }
}
