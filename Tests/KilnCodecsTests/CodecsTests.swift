import KilnModel
import KilnCodecs
import Testing

@Suite struct CodecsTests {
    @Test func registryHasACodecForEveryFormat() {
        #expect(Codecs.decoder(for: .jpeg) is JPEGDecoder)
        #expect(Codecs.decoder(for: .png) is PNGDecoder)
        #expect(Codecs.decoder(for: .webp) is WebPDecoder)
        #expect(Codecs.encoder(for: .jpeg) is JPEGEncoder)
        #expect(Codecs.encoder(for: .png) is PNGEncoder)
        #expect(Codecs.encoder(for: .webp) is WebPEncoder)
    }

    /// Every encoder's output is sniffed and decoded back by the matching registry entries.
    @Test(arguments: ImageFormat.allCases.filter(\.isEncodable))
    func encodeSniffDecode(_ format: ImageFormat) throws {
        let image = PixelHelpers.gradient(width: 64, height: 48, channels: format.supportsAlpha ? 4 : 3)
        let data = try Codecs.encoder(for: format).encode(image, options: EncodeOptions(format: format, quality: 90))
        let sniffed = try #require(MagicSniffer().sniff(data).format)
        #expect(sniffed == format)
        let decoded = try Codecs.decoder(for: sniffed).decode(data, options: DecodeOptions())
        #expect(decoded.header.format == format)
        #expect(decoded.buffer.size == image.size)
        #expect(decoded.buffer.channels == image.channels)
    }
}
