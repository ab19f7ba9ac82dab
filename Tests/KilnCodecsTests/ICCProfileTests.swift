@testable import KilnCodecs
import Testing

@Suite struct ICCProfileTests {
    private func profile(_ space: String, count: Int) -> [UInt8] {
        var bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for (i, c) in space.utf8.enumerated() { bytes[16 + i] = c }
        return bytes
    }

    @Test func recognisesRGBProfiles() {
        #expect(ICCProfile.isRGB(profile("RGB ", count: 200)))
        #expect(!ICCProfile.isRGB(profile("CMYK", count: 200)))
        #expect(!ICCProfile.isRGB(profile("GRAY", count: 200)))
        #expect(!ICCProfile.isRGB(Array(profile("RGB ", count: 200).prefix(100))))   // no full header
        #expect(ICCProfile.hasDataColourSpace(profile("GRAY", count: 200), "GRAY"))
        #expect(!ICCProfile.hasDataColourSpace(profile("GRAY", count: 200), "CMYK"))
    }

    @Test func segmentsAndReassemblyRoundTrip() throws {
        let big = profile("RGB ", count: 2 * ICCProfile.jpegChunkCapacity + 10)
        let segments = try #require(ICCProfile.jpegSegments(big))
        #expect(segments.count == big.count + 3 * 18)
        // Walk the segments, collect them out of order, reassemble in sequence order.
        var chunks: [ICCProfile.JPEGChunk] = []
        var pos = 0
        while pos < segments.count {
            #expect(segments[pos] == 0xFF && segments[pos + 1] == 0xE2)
            let length = Int(segments[pos + 2]) << 8 | Int(segments[pos + 3])
            chunks.append(.init(sequence: Int(segments[pos + 16]), total: Int(segments[pos + 17]), range: pos + 18 ..< pos + 2 + length))
            pos += 2 + length
        }
        #expect(chunks.map(\.sequence) == [1, 2, 3] && chunks.allSatisfy { $0.total == 3 })
        let reassembled = segments.withUnsafeBytes { ICCProfile.assemble(chunks.reversed(), in: $0) }
        #expect(reassembled == big)
        // Inconsistent numbering is refused rather than guessed.
        let missing = segments.withUnsafeBytes { ICCProfile.assemble(Array(chunks.prefix(2)), in: $0) }
        #expect(missing == nil)
        var duplicate = chunks
        duplicate[2].sequence = 2
        #expect(segments.withUnsafeBytes { ICCProfile.assemble(duplicate, in: $0) } == nil)
        #expect(ICCProfile.jpegSegments([]) == nil)
    }
}
