/// ICC profile helpers shared by the codecs: the header check the encoders use, and the JPEG
/// APP2 "ICC_PROFILE" chunking (libjpeg's `jpeg_write_icc_profile` / `jpeg_read_icc_profile`
/// conventions, which TurboJPEG 2.1 does not expose).
public enum ICCProfile {
    /// "ICC_PROFILE\0", the identifier that starts each APP2 chunk.
    static let jpegSignature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]
    /// Profile bytes per APP2 segment: 65 535 − 2 (length) − 14 (identifier, sequence, count).
    static let jpegChunkCapacity = 65_519

    /// True when the profile's data colour space (header bytes 16-19) is 'RGB '. Encoders embed only
    /// such profiles: a CMYK profile from a CMYK JPEG no longer describes the RGB pixels it became.
    public static func isRGB(_ profile: [UInt8]) -> Bool {
        hasDataColourSpace(profile, "RGB ")
    }

    /// True when the header's data colour space (bytes 16-19) is `signature` ("RGB ", "GRAY", "CMYK").
    static func hasDataColourSpace(_ profile: [UInt8], _ signature: StaticString) -> Bool {
        guard profile.count >= 128, signature.utf8CodeUnitCount == 4 else { return false }
        let expected = signature.utf8Start
        return (0..<4).allSatisfy { profile[16 + $0] == expected[$0] }
    }

    /// The complete APP2 segments (marker, length, identifier, sequence number from 1, count,
    /// data) carrying `profile`; nil when it is empty or needs more than 255 segments.
    static func jpegSegments(_ profile: [UInt8]) -> [UInt8]? {
        let count = (profile.count + jpegChunkCapacity - 1) / jpegChunkCapacity
        guard count >= 1, count <= 255 else { return nil }
        var segments: [UInt8] = []
        segments.reserveCapacity(profile.count + count * 18)
        for index in 0..<count {
            let start = index * jpegChunkCapacity, end = min(start + jpegChunkCapacity, profile.count)
            let length = 2 + jpegSignature.count + 2 + (end - start)
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            segments += jpegSignature
            segments += [UInt8(index + 1), UInt8(count)]
            segments += profile[start..<end]
        }
        return segments
    }

    /// One APP2 chunk found in a JPEG: its sequence number, the announced count and where its data are.
    struct JPEGChunk {
        var sequence: Int
        var total: Int
        var range: Range<Int>
    }

    /// Concatenates the chunks in sequence order, as `jpeg_read_icc_profile` does; nil when the
    /// numbering is inconsistent (missing, duplicate or out-of-range sequence numbers).
    static func assemble(_ chunks: [JPEGChunk], in data: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let total = chunks.first?.total, total > 0, chunks.count == total else { return nil }
        var bySequence = [Range<Int>?](repeating: nil, count: total)
        for chunk in chunks {
            guard chunk.total == total, (1...total).contains(chunk.sequence),
                  bySequence[chunk.sequence - 1] == nil,
                  chunk.range.lowerBound >= 0, chunk.range.upperBound <= data.count else { return nil }
            bySequence[chunk.sequence - 1] = chunk.range
        }
        var profile: [UInt8] = []
        profile.reserveCapacity(chunks.reduce(0) { $0 + $1.range.count })
        for range in bySequence {
            guard let range else { return nil }
            profile.append(contentsOf: data[range])
        }
        return profile.isEmpty ? nil : profile
    }
}
