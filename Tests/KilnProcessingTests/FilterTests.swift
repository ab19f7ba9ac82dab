import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct FilterTests {
    static let photo = PixelStats.photoLike(width: 64, height: 48)
    static let noise = TestImages.noise(width: 64, height: 48, channels: 3, seed: 3)

    @Test(arguments: [0.5, 1.5, 3, 8, 50])
    func blurLowersEdgeEnergyAndKeepsTheMean(sigma: Double) throws {
        for image in [Self.photo, Self.noise] {
            let out = try GaussianBlur(sigma: sigma).process(image, context: PixelStats.context(image))
            #expect(out.size == image.size && out.channels == 3)
            let factor = sigma < 1 ? 0.95 : 0.75
            #expect(Double(PixelStats.edgeEnergy(out)) < Double(PixelStats.edgeEnergy(image)) * factor, "sigma \(sigma)")
            // Clamp-to-edge keeps the mean up to edge effects, which grow with sigma over this small image.
            let tolerance = sigma <= 8 ? 2.0 : 8
            #expect(abs(PixelStats.mean(out) - PixelStats.mean(image)) < tolerance, "sigma \(sigma)")
        }
    }

    @Test func strongerBlurSmoothsMore() throws {
        let energies = try [1.0, 2.5, 6].map { sigma in
            PixelStats.edgeEnergy(try GaussianBlur(sigma: sigma).process(Self.noise, context: PixelStats.context(Self.noise)))
        }
        #expect(energies == energies.sorted(by: >))
    }

    @Test func blurKeepsAFlatImageFlat() throws {
        let flat = TestImages.constant(width: 30, height: 20, [10, 200, 90])
        for sigma in [1.0, 5] {
            #expect(try GaussianBlur(sigma: sigma).process(flat, context: PixelStats.context(flat)) == flat)
        }
    }

    @Test(arguments: [1.0, 4])
    func blurOfAlphaDoesNotDarkenEdges(sigma: Double) throws {
        let disc = TestImages.disc(size: 40, radius: 12)
        let out = try GaussianBlur(sigma: sigma).process(disc, context: PixelStats.context(disc))
        var partial = 0
        for i in 0..<out.pixelCount where out.pixels[i * 4 + 3] > 0 {
            let px = out.pixels[(i * 4)..<(i * 4 + 3)]
            #expect(px.allSatisfy { $0 >= 250 }, "pixel \(i) is \(Array(out.pixels[(i * 4)..<(i * 4 + 4)]))")
            if out.pixels[i * 4 + 3] < 255 { partial += 1 }
        }
        #expect(partial > 50, "the alpha edge is blurred too")
    }

    @Test func gaussianKernelIsNormalised() {
        let k = GaussianBlur.kernel(sigma: 1.2)
        #expect(k.count == 9)
        #expect(abs(k.reduce(0, +) - 1) < 1e-5)
        #expect(k[4] == k.max())
    }

    @Test(arguments: [2.0, 5, 13.7, 50])
    func boxRadiiMatchTheVariance(sigma: Double) {
        let radii = GaussianBlur.boxRadii(sigma: sigma)
        #expect(radii.count == 3)
        let variance = radii.map { r in Double((2 * r + 1) * (2 * r + 1) - 1) / 12 }.reduce(0, +)
        #expect(abs(variance.squareRoot() - sigma) / sigma < 0.1, "radii \(radii)")
    }

    @Test func sharpenRaisesEdgeEnergy() throws {
        let soft = try GaussianBlur(sigma: 1.5).process(Self.photo, context: PixelStats.context(Self.photo))
        let out = try Sharpen(sigma: 1).process(soft, context: PixelStats.context(soft))
        #expect(PixelStats.edgeEnergy(out) > PixelStats.edgeEnergy(soft) * 5 / 4)
        #expect(abs(PixelStats.mean(out) - PixelStats.mean(soft)) < 3)
    }

    @Test func sharpenKeepsAlpha() throws {
        let disc = TestImages.disc(size: 30, radius: 10)
        let soft = try GaussianBlur(sigma: 1).process(disc, context: PixelStats.context(disc))
        let out = try Sharpen(sigma: 2).process(soft, context: PixelStats.context(soft))
        for i in 0..<out.pixelCount where soft.pixels[i * 4 + 3] > 2 {
            #expect(out.pixels[i * 4 + 3] == soft.pixels[i * 4 + 3])
        }
    }
}
