import Testing
import KilnTestSupport
import KilnTestBytes
import KilnModel
@testable import KilnPipeline

/// `f:json`, `f:blurhash`, `f:thumbhash` through the pipeline's seams: what is decoded, what the
/// cache keys hold, what the caches give back.
@Suite struct DocumentPipelineTests {
    typealias Doubles = PipelineSeamTests.Doubles

    @Test func jsonWithoutPlaceholdersDecodesNoPixel() throws {
        let d = Doubles()
        let request = try SpecParser().parse("/rs:6:6:fit/f:json/a.png", isDecoded: true)
        let result = try d.pipeline().image(for: request, accepted: accepting(nil))
        #expect(d.decoder.headerReads == 1 && d.decoder.decodes.isEmpty && d.encoder.calls.isEmpty && d.processor.calls.isEmpty)
        #expect(result.document == .json && result.format == nil)
        let text = String(decoding: result.data, as: UTF8.self)
        #expect(text.hasPrefix(#"{"exif":{},"result":{"height":4,"width":6},"source":{"alpha":false,"bytes":"#))
        #expect(text.contains(#""width":12"#) && !text.contains("placeholders"))
        #expect(result.timeline.phases.map(\.name) == ["load", "sniff", "header", "write"])
    }

    @Test func placeholdersDecodeOnceSmall() throws {
        let d = Doubles()
        let request = try SpecParser().parse("/f:json/ph:1/a.png", isDecoded: true)
        let result = try d.pipeline().image(for: request, accepted: accepting(nil))
        // One decode, asked to shrink towards 100 px (a 12x8 source needs no shrinking: nil).
        #expect(d.decoder.decodes.count == 1 && d.decoder.decodes[0].minimumSize == nil)
        // The LQIP went to the WebP encoder at quality 30.
        #expect(d.encoder.calls.map(\.options.format) == [.webp] && d.encoder.calls.map(\.options.quality) == [30])
        let text = String(decoding: result.data, as: UTF8.self)
        #expect(text.contains(#""placeholders":{"blurhash":""#) && text.contains(#""lqip":"data:image/webp;base64,ZW5jb2RlZA==""#))
    }

    @Test func hashesAreCachedUnderTheirOwnKeys() throws {
        let d = Doubles()
        let pipeline = try d.pipeline(cached: true)
        let blur = try SpecParser().parse("/f:blurhash/a.png", isDecoded: true)
        let thumb = try SpecParser().parse("/f:thumbhash/a.png", isDecoded: true)
        let first = try pipeline.image(for: blur, accepted: accepting(nil))
        let again = try pipeline.image(for: blur, accepted: accepting(nil))
        #expect(first.outcome == .miss && again.outcome == .hitMemory && again.data == first.data && again.document == .blurhash)
        let other = try pipeline.image(for: thumb, accepted: accepting(nil))
        #expect(other.outcome == .miss && other.document == .thumbhash && other.digest != first.digest)
        #expect(d.decoder.decodes.count == 2)
        let source = SourceIdentity(size: 3, mtimeNanoseconds: 4, inode: 2)
        let keys = [blur, thumb, try SpecParser().parse("/f:json/a.png", isDecoded: true), try SpecParser().parse("/a.png", isDecoded: true)]
            .map { pipeline.cacheKey(for: $0, accepted: accepting(nil), source: source).hex }
        #expect(Set(keys).count == 4)
    }

    @Test func gpsSettingIsInTheKey() throws {
        var on = OutputConfiguration()
        on.infoGPS = true
        let request = try SpecParser().parse("/f:json/a.png", isDecoded: true)
        let source = SourceIdentity(size: 3, mtimeNanoseconds: 4, inode: 2)
        #expect(CacheKey(request: request, accepted: accepting(nil), source: source, output: on)
                != CacheKey(request: request, accepted: accepting(nil), source: source, output: OutputConfiguration()))
    }
}
