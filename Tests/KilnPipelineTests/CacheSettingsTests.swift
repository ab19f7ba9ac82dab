import Testing
import KilnModel
@testable import KilnPipeline

/// The settings part of cache keys is derived from the resolved encode options: every setting
/// that changes output bytes changes the key, and none other does.
@Suite struct CacheSettingsTests {
    static let identity = SourceIdentity(size: 10, mtimeNanoseconds: 1_700_000_000_000_000_000, inode: 3)

    static func key(_ spec: String, accept: String? = nil, _ configure: (inout PipelineConfiguration) -> Void = { _ in }) throws -> String {
        var configuration = try PipelineConfiguration(ConfigValues())
        configure(&configuration)
        let request = try configuration.parser.parse(spec, isDecoded: true)
        return CacheKey(request: request, accepted: accepting(accept), source: identity, output: configuration.output).hex
    }

    /// Each `output.*` key of the configuration, changed from its default.
    static var byteChanging: [(String, @Sendable (inout PipelineConfiguration) -> Void)] { [
        ("output.jpeg_quality", { $0.output.jpegQuality = 55 }),
        ("output.webp_quality", { $0.output.webpQuality = 55 }),
        ("output.webp_method", { $0.output.webpMethod = 5 }),
        ("output.png_compression_level", { $0.output.pngCompressionLevel = 9 }),
        ("output.avif_quality", { $0.output.avifQuality = 40 }),
        ("output.avif_speed", { $0.output.avifSpeed = 6 }),
        ("output.progressive", { $0.output.progressive = true }),
        ("output.jpeg_subsampling", { $0.output.jpegSubsampling = .s444 }),
        ("output.background", { $0.output.background = .black }),
        ("output.strip", { $0.output.strip = .keepCopyright }),
        ("output.colour_profile", { $0.output.colourProfile = .keep }),
    ] }

    /// `output.*` keys the front end resolves into the request itself (and so into its canonical
    /// form), for some URLs only: `output.strip_signed` for signed and trusted ones (`ImageHandler`).
    static var requestResolved: [(String, @Sendable (inout PipelineConfiguration) -> Void)] { [
        ("output.strip_signed", { $0.output.stripSigned = .keepCopyright }),
    ] }

    /// `output.*` keys that change documents (`f:json`) only, never an image's bytes.
    static var documentChanging: [(String, @Sendable (inout PipelineConfiguration) -> Void)] { [
        ("output.info_gps", { $0.output.infoGPS = true }),
    ] }

    @Test func documentSettingsChangeDocumentKeysOnly() throws {
        for (name, change) in Self.documentChanging {
            #expect(try Self.key("/f:json/a.jpg", change) != (try Self.key("/f:json/a.jpg")), "\(name)")
            #expect(try Self.key("/w:100/a.jpg", change) == (try Self.key("/w:100/a.jpg")), "\(name)")
        }
        // The LQIP's WebP method is in the f:json key too.
        #expect(try Self.key("/f:json/ph:1/a.jpg") { $0.output.webpMethod = 5 } != (try Self.key("/f:json/ph:1/a.jpg")))
    }

    @Test func everyOutputSettingChangesTheKeyOfAURLThatDoesNotSayIt() throws {
        #expect(Set((Self.byteChanging + Self.documentChanging + Self.requestResolved).map(\.0)) == OutputConfiguration.keys)   // none forgotten
        for spec in ["/w:100/a.jpg", "/w:100/f:auto/a.jpg"] {
            let base = try Self.key(spec)
            for (name, change) in Self.byteChanging {
                #expect(try Self.key(spec, change) != base, "\(name) for \(spec)")
            }
        }
    }

    @Test func aSettingOnlyMattersWhereTheOutputFormatUsesIt() throws {
        // f:webp says the format: the JPEG quality default is not resolved into its options.
        // (Fields the format ignores, such as the PNG level, are still in `EncodeOptions.canonical`:
        // changing them costs a re-render, never a stale result.)
        let spec = "/w:100/f:webp/a.jpg"
        let base = try Self.key(spec)
        #expect(try Self.key(spec) { $0.output.jpegQuality = 55 } == base)
        #expect(try Self.key(spec) { $0.output.webpQuality = 55 } != base)
        #expect(try Self.key(spec) { $0.output.webpMethod = 5 } != base)
        // The URL's own value wins over the default: the default no longer changes the key.
        #expect(try Self.key("/q:70/f:jpeg/a.jpg") { $0.output.jpegQuality = 55 } == (try Self.key("/q:70/f:jpeg/a.jpg")))
        #expect(try Self.key("/pg:1/f:jpeg/a.jpg") { $0.output.progressive = true } == (try Self.key("/pg:1/f:jpeg/a.jpg")))
    }

    @Test func settingsThatDoNotChangeBytesKeepTheKey() throws {
        let spec = "/w:100/a.jpg"
        let base = try Self.key(spec)
        let neutral: [(String, (inout PipelineConfiguration) -> Void)] = [
            ("limits.max_file_bytes", { $0.limits.maxFileBytes += 1 }),
            ("limits.max_output_pixels", { $0.limits.maxOutputPixels += 1 }),
            ("limits.max_operations", { $0.limits.maxOperations += 1 }),
            ("source.root", { $0.source.root = "/elsewhere" }),
        ]
        for (name, change) in neutral {
            #expect(try Self.key(spec, change) == base, "\(name)")
        }
    }

    /// Chroma subsampling: the URL's `ss:` or `output.jpeg_subsampling`, for JPEG only; 4:2:0
    /// writes nothing into the key (keys made before the option stay), the others do.
    @Test func chromaSubsamplingIsJPEGsAndInTheKeyUnlessDefault() throws {
        var output = OutputConfiguration()
        var request = OutputOptions()
        #expect(output.encodeOptions(format: .jpeg, request: request).chromaSubsampling == .s420)
        #expect(!output.encodeOptions(format: .jpeg, request: request).canonical.contains("cs="))
        request.subsampling = .s444
        #expect(output.encodeOptions(format: .jpeg, request: request).canonical.hasSuffix(";cs=444"))
        #expect(output.encodeOptions(format: .webp, request: request).chromaSubsampling == .s420)
        output = try OutputConfiguration(ConfigValues(["output.jpeg_subsampling": "4:2:2"]))
        #expect(output.encodeOptions(format: .jpeg).chromaSubsampling == .s422)
        #expect(output.encodeOptions(format: .jpeg, request: request).chromaSubsampling == .s444)   // the URL wins
        #expect(throws: ConfigError.self) { _ = try OutputConfiguration(ConfigValues(["output.jpeg_subsampling": "4:1:1"], origin: "test")) }
    }

    /// `EncodeOptions.canonical` covers every field.
    @Test func encodeOptionsIdentifierCoversEveryField() {
        let base = EncodeOptions(format: .jpeg)
        var variants: [EncodeOptions] = []
        var o = base; o.format = .png; variants.append(o)
        o = base; o.quality = 81; variants.append(o)
        o = base; o.progressive = true; variants.append(o)
        o = base; o.lossless = true; variants.append(o)
        o = base; o.webpMethod = 3; variants.append(o)
        o = base; o.avifSpeed = 5; variants.append(o)
        o = base; o.pngCompressionLevel = 1; variants.append(o)
        o = base; o.iccProfile = [1]; variants.append(o)
        o = base; o.metadata = ImageMetadata(); variants.append(o)
        o = base; o.chromaSubsampling = .s444; variants.append(o)
        let all = [base.canonical] + variants.map(\.canonical)
        #expect(Set(all).count == all.count)
        // Mirror check: a new stored property must be added to `canonical` (and to this list).
        #expect(Mirror(reflecting: base).children.count == variants.count)
    }

    /// The key's settings are those of the options the encoder receives.
    @Test func settingsAreTheEncoderOptions() {
        var output = OutputConfiguration()
        output.progressive = true
        let request = OutputOptions()
        let settings = output.cacheSettings(for: request, outputToken: "jpeg")
        #expect(settings.hasPrefix(output.encodeOptions(format: .jpeg, request: request).canonical))
        #expect(settings.contains("pg=1"))
        // Format unknown before reading: every format's options.
        let any = output.cacheSettings(for: request, outputToken: "source")
        for format in ImageFormat.allCases.filter(\.isNegotiable) {
            #expect(any.contains(output.encodeOptions(format: format, request: request).canonical))
        }
    }
}

/// `strip:` and `output.strip`: each policy is its own key, and a URL that names the default's
/// policy is keyed by what it says.
@Suite struct StripKeyTests {
    @Test func eachMetadataPolicyHasItsOwnKey() throws {
        let keys = try ["/w:100/a.jpg", "/strip:1/w:100/a.jpg", "/strip:copyright/w:100/a.jpg", "/strip:0/w:100/a.jpg"]
            .map { try CacheSettingsTests.key($0) }
        #expect(Set(keys.dropFirst()).count == 3)
        // output.strip = keep_copyright makes the plain URL's bytes those of strip:copyright (its key differs: the URL differs).
        #expect(try CacheSettingsTests.key("/w:100/a.jpg") { $0.output.strip = .keepCopyright } != keys[0])
        // output.strip_signed is resolved into signed and trusted requests by the front end, not here.
        #expect(try CacheSettingsTests.key("/w:100/a.jpg") { $0.output.stripSigned = .none } == keys[0])
    }
}
