import Testing
import KilnTestSupport
import KilnCodecs
import KilnModel
@testable import KilnPipeline

/// `f:auto` only picks formats the server can write: without libavif an AVIF-accepting client
/// gets WebP, not a failed encode.
@Suite struct AutoFormatAvailabilityTests {
    static let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"

    func render(encoders: (any ImageEncoderProviding)?, accept: String) throws -> String {
        var stages = try PipelineStages.standard(source: try PipelineCachePathTests.source())
        if let encoders { stages.encoders = encoders }
        let pipeline = ImagePipeline(stages: stages)
        let request = try SpecParser().parse("/f:auto/a.png", isDecoded: true)
        return try pipeline.image(for: request, accepted: accepting(accept)).image.format?.mimeType ?? ""
    }

    /// Encoders with AVIF reported missing (as on a machine without libavif).
    static func withoutAVIF() -> RecordingEncoder {
        RecordingEncoder(encodable: Set(ImageFormat.allCases.filter { $0.isEncodable && $0 != .avif }))
    }

    @Test func withoutLibavifAutoFallsBackToWebP() throws {
        let encoders = Self.withoutAVIF()
        #expect(try render(encoders: encoders, accept: Self.chromium) == "image/webp")
        #expect(try render(encoders: encoders, accept: "image/avif,*/*;q=0.5") == "image/png")
        #expect(encoders.calls.map(\.options.format) == [.webp, .png])
    }

    @Test func withLibavifAutoPicksAVIF() throws {
        // The test machine has libavif (scripts/lib.sh installs it): the standard stages use it.
        #expect(Codecs.canEncode(.avif))
        #expect(try render(encoders: nil, accept: Self.chromium) == "image/avif")
        #expect(!Codecs.canEncode(.heic) && Codecs.canEncode(.gif) && !Codecs.canEncode(.svg) && Codecs.canEncode(.webp))
    }
}
