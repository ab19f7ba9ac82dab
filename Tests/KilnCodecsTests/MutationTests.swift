import KilnModel
import KilnCodecs
import Testing

/// Damaged inputs never crash a decoder: each either decodes (to the size its header announced)
/// or throws a `DecodeError`. In debug builds the standard library's bounds checks are on, so
/// any out-of-range read in the Swift-side parsers (markers, EXIF, chunks) would trap here; the
/// release build (-Ounchecked) relies on the hand-written checks this exercises.
@Suite struct MutationTests {
    /// A small deterministic generator (SplitMix64), so failures reproduce.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: ["pillow_hopper_orientation_6.jpg", "rocket_progressive.jpg", "pngsuite_basi2c08.png",
                      "ljt_vgl_5674_0098.png", "pillow_hopper_orientation_3.webp", "imagewebp_random_lossy_anim.webp"])
    func mutatedFilesNeverCrash(_ file: String) throws {
        let original = try Corpus.data(file)
        let format = try #require(MagicSniffer().sniff(original).format)
        let decoder = Codecs.decoder(for: format)
        var rng = SplitMix(state: UInt64(original.count))
        let options = DecodeOptions(limits: DecodeLimits(maxPixels: 4_000_000, maxAnimationPixels: 4_000_000))
        var outcomes = (decoded: 0, refused: 0)
        for round in 0..<150 {
            var data = original
            if round % 3 == 0 {
                data.removeLast(Int.random(in: 1..<data.count, using: &rng))   // truncation
            } else {
                // A few byte changes, biased to the header area where the Swift parsers look.
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let limit = Bool.random(using: &rng) ? min(data.count, 512) : data.count
                    data[Int.random(in: 0..<limit, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            do {
                let image = try decoder.decode(data, options: options)
                #expect(image.buffer.pixels.count == image.buffer.pixelCount * image.buffer.channels)
                #expect((1...8).contains(image.header.orientation))
                outcomes.decoded += 1
            } catch {
                outcomes.refused += 1
            }
        }
        #expect(outcomes.decoded + outcomes.refused == 150)
        #expect(outcomes.refused > 0, "\(file): no mutation was refused")
    }
}
