import Testing
import KilnCodecs
import KilnModel
@testable import KilnPipeline

/// `f:auto` only picks formats the server can write: without libavif an AVIF-accepting client
/// gets WebP, not a failed encode.
@Suite struct AutoFormatAvailabilityTests {
    /// The standard encoders, with AVIF reported missing (as on a machine without libavif).
    struct WithoutAVIF: ImageEncoderProviding {
        func encoder(for format: ImageFormat) -> any ImageEncoding { Codecs.encoder(for: format) }
        func canEncode(_ format: ImageFormat) -> Bool { format != .avif && format.isEncodable }
    }

    static let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"

    func render(encoders: (any ImageEncoderProviding)?, accept: String) throws -> String {
        var stages = try PipelineStages.standard(source: try PipelineCachePathTests.source())
        if let encoders { stages.encoders = encoders }
        let pipeline = ImagePipeline(stages: stages)
        let request = try SpecParser().parse("/f:auto/a.png", isDecoded: true)
        return try pipeline.image(for: request, accepted: accepting(accept)).image.format?.mimeType ?? ""
    }

    @Test func withoutLibavifAutoFallsBackToWebP() throws {
        #expect(try render(encoders: WithoutAVIF(), accept: Self.chromium) == "image/webp")
        #expect(try render(encoders: WithoutAVIF(), accept: "image/avif,*/*;q=0.5") == "image/png")
    }

    @Test func withLibavifAutoPicksAVIF() throws {
        // The test machine has libavif (scripts/lib.sh installs it): the standard stages use it.
        #expect(Codecs.canEncode(.avif))
        #expect(try render(encoders: nil, accept: Self.chromium) == "image/avif")
        #expect(!Codecs.canEncode(.heic) && !Codecs.canEncode(.gif) && Codecs.canEncode(.webp))
    }
}
