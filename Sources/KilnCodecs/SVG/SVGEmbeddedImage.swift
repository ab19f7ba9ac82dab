import KilnModel

/// An `<image>`'s `data:` URL, checked before librsvg's loaders decode it: base64 PNG, JPEG,
/// GIF or WebP only, whose header Kiln's own decoders read, so an embedded decompression bomb
/// is priced (`VectorFacts.embeddedPixels`) or refused by its announced size, never decoded.
enum SVGEmbeddedImage {
    static let types: [(prefix: String, format: ImageFormat)] = [
        ("data:image/png;base64,", .png), ("data:image/jpeg;base64,", .jpeg), ("data:image/jpg;base64,", .jpeg),
        ("data:image/gif;base64,", .gif), ("data:image/webp;base64,", .webp),
    ]

    /// The pixels of the image `url` embeds; nil when it is not a data URL of an allowed type
    /// or its header does not read (the reference is then dropped).
    static func pixels(_ url: String) throws(DecodeError) -> Int? {
        let trimmed = url.trimmingASCIIWhitespace()
        let lower = trimmed.prefix(32).lowercased()
        guard let type = types.first(where: { lower.hasPrefix($0.prefix) }) else { return nil }
        guard let bytes = Base64.decode(trimmed.utf8.dropFirst(type.prefix.utf8.count)) else { return nil }
        // The bytes must be what the URL says (libmagic is not consulted for a few bytes).
        let signatures: [ImageFormat: [UInt8]] = [
            .png: [0x89, 0x50, 0x4E, 0x47], .jpeg: [0xFF, 0xD8, 0xFF], .gif: Array("GIF8".utf8), .webp: Array("RIFF".utf8),
        ]
        guard let signature = signatures[type.format], bytes.starts(with: signature) else { return nil }
        guard let header = try? Codecs.decoder(for: type.format).readHeader(bytes) else { return nil }
        let pixels = header.width.multipliedReportingOverflow(by: header.height)
        guard !pixels.overflow, pixels.partialValue <= SVGSanitizer.maxEmbeddedPixels else {
            throw .overLimit("SVG embeds a \(header.width)x\(header.height) image (at most \(SVGSanitizer.maxEmbeddedPixels) pixels)")
        }
        return pixels.partialValue * max(header.frameCount, 1)
    }
}
